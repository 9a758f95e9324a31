#!/usr/bin/env bash
# The kit as a user gets it: a wheel built from this checkout, installed into a fresh venv, run as
# `jax-kit` from a project folder outside the repository, with real JAX releases.
#
#   scripts/check-installed.sh          # CI runs it after the integration lane (.ci/run)
#
# It checks that the reports land in the project's ./jax-kit-reports, that a relative --script is read
# from the project, that two projects share one built environment for the same release (one build),
# and that nothing is written into the installed package or into this repository. Everything it makes
# is under one temp folder, removed on the way out (KEEP=1 keeps it). Releases: 0.6.0 for the scaling
# check, 0.4.35 and 0.4.36 (neighbours, both built by the integration lane) for the bisect, so uv's
# cache already holds their wheels in CI.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/jax-kit-installed.XXXXXX")"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
fail() { echo "check-installed: FAILED: $*" >&2; exit 1; }
step() { echo "check-installed: $*"; }
# run OUT CMD...: CMD's output into OUT; on a failure, OUT shown and the exit code named.
run() { local out="$1"; shift; "$@" > "$out" 2>&1 || { local code=$?; cat "$out"; fail "$* exited $code"; }; }

# A fresh user cache (not this checkout's .nox/jax-envs): built from uv's package cache, so quick.
export JAX_KIT_CACHE="$WORK/cache"
unset KIT_CACHE_DIR PYTHONPATH
# Bytecode written as on a user's machine, so "nothing written into site-packages" is a real test.
unset PYTHONDONTWRITEBYTECODE

repo_before="$(git -C "$REPO" status --porcelain --ignored)"
touch "$WORK/started"

step "building the wheel"
uv build --quiet --wheel --out-dir "$WORK/dist" "$REPO"
wheel="$(ls "$WORK"/dist/*.whl)"
step "installing $(basename "$wheel") into a fresh venv"
uv venv --quiet --python python3 "$WORK/venv"
# Bytecode compiled at install, as pip does: the kit's own imports then write nothing there either.
uv pip install --quiet --compile-bytecode --python "$WORK/venv/bin/python" "$wheel"
site="$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
[ -f "$site/kit/defaults/matrix.toml" ] || fail "the wheel carries no kit/defaults/matrix.toml"
[ ! -e "$site/reports" ] || fail "reports/ was installed as a package"
site_before="$(cd "$site" && find . -type f | sort)"
touch "$WORK/installed"
jax_kit="$WORK/venv/bin/jax-kit"

step "uv tool install of the same wheel gives the command too"
UV_TOOL_DIR="$WORK/tools" UV_TOOL_BIN_DIR="$WORK/tools/bin" uv tool install --quiet "$wheel"
[ "$("$WORK/tools/bin/jax-kit" --version)" = "$("$WORK/venv/bin/jax-kit" --version)" ] || fail "uv tool install's jax-kit"

mkdir -p "$WORK/project-a" "$WORK/project-b"
WORK="$(cd "$WORK" && pwd -P)"
cd "$WORK/project-a"
step "jax-kit --help and --version, from $PWD"
run help.out "$jax_kit" --help
grep -q "jax-kit scaling VERSION" help.out || fail "jax-kit --help does not list the commands"
version="$("$jax_kit" --version)"
# -B: reading the checkout's version must not write kit/__pycache__ there (bytecode is on in this script).
[ "$version" = "jax-kit $(cd "$REPO" && python3 -B -c 'import kit; print(kit.__version__)')" ] \
  || fail "jax-kit --version said '$version'"

step "jax-kit scaling 0.6.0 (a real release, built into the user cache)"
run scaling.out "$jax_kit" scaling 0.6.0
grep -q "== scaling · jax 0.6.0 · cpu: UNAFFECTED" scaling.out || { cat scaling.out; fail "no verdict"; }
ls jax-kit-reports/results/scaling-0.6.0-cpu-*.json > /dev/null || fail "no record in ./jax-kit-reports/results"
grep -q "reproduce: jax-kit scaling 0.6.0" scaling.out || fail "the reproduce line is not a jax-kit command"

# The release's own numpy ran, not the one the kit's venv holds (matplotlib's): repro/ reached the child
# from its copy in the user cache, never with the venv's site-packages on PYTHONPATH.
"$WORK/venv/bin/python" - jax-kit-reports/results/scaling-0.6.0-cpu-*.json <<'EOF' || fail "the run saw the kit's packages"
import json, sys
record = json.load(open(sys.argv[1]))
ran, pinned = record["environment"]["numpy"], record["install"]["resolved"]["numpy"]
sys.exit(0 if ran == pinned else f"numpy {ran} ran, the release's environment pins {pinned}")
EOF
env_python="$(ls -d "$JAX_KIT_CACHE"/jax-envs/jax-0.6.0-cpu-*/bin/python)"
step "jax-kit run scaling --python (jax 0.6.0's interpreter, as it is)"
run existing.out "$jax_kit" run scaling --python "$env_python"
grep -q "existing interpreter: UNAFFECTED" existing.out || { cat existing.out; fail "no verdict with --python"; }
"$WORK/venv/bin/python" - jax-kit-reports/results/scaling-*.json <<'EOF' || fail "the inventory saw the kit's own packages"
import json, sys
for path in sys.argv[1:]:
    install = json.load(open(path))["install"]
    if install.get("environment") == "existing" and ({"matplotlib", "nox"} & set(install["packages"])):
        sys.exit(f"{path}: the interpreter's packages include the kit's: {sorted(install['packages'])}")
EOF

step "jax-kit bisect --script ./x.py --good 0.4.35 --bad 0.4.36 (a relative script path)"
cat > x.py <<'EOF'
# A keyword argument named f to a jitted function (examples/issues/jit-kwarg-named-f.md).
import jax
import jax.numpy as jnp


def loss(params, f):
    return jnp.sum((params * f) ** 2)


print(jax.jit(loss)(jnp.ones(4), f=2.0))
EOF
run bisect.out "$jax_kit" bisect --script ./x.py --good 0.4.35 --bad 0.4.36
report="jax-kit-reports/bisect-script-x-good0.4.35-bad0.4.36-cpu.md"
[ -f "$report" ] && [ -f "${report%.md}.json" ] || { cat bisect.out; fail "no $report (and .json)"; }
grep -q "first bad release \*\*jax 0.4.36\*\*" "$report" || fail "the report does not name jax 0.4.36"
grep -q 'jax-kit bisect --script ./x.py --good 0.4.35 --bad 0.4.36' "$report" || fail "no jax-kit reproduce line"

step "a relative path that is not there says what it was read from"
if "$jax_kit" bisect --script checks/missing.py --good 0.4.35 --bad 0.4.36 > missing.out 2>&1; then
  fail "a missing script was accepted"
fi
grep -q "read from the current folder $(pwd -P)" missing.out || { cat missing.out; fail "the error does not say from where"; }

step "a second project, same release: the first one's environment, no second build"
cd "$WORK/project-b"
run scaling.out "$jax_kit" scaling 0.6.0
! grep -q "creating environment" scaling.out || fail "project b built jax 0.6.0 again"
record="$(ls jax-kit-reports/results/scaling-0.6.0-cpu-*.json)"
"$WORK/venv/bin/python" - "$record" <<'EOF' || fail "project b's record does not say the environment was reused"
import json, sys
install = json.load(open(sys.argv[1]))["install"]
sys.exit(0 if install.get("environment") == "reused" and install.get("env_reused") else 1)
EOF
built="$(find "$JAX_KIT_CACHE/jax-envs" -maxdepth 1 -type d -name 'jax-0.6.0-cpu-*' | wc -l)"
[ "$built" = 1 ] || fail "$built environments of jax 0.6.0 in the user cache, not 1"
[ "$(ls "$WORK"/project-a/jax-kit-reports/results/ | wc -l)" = 2 ] || fail "project b's record went to project a"
run report.out "$jax_kit" report --no-plots
[ -f jax-kit-reports/matrix.md ] || fail "jax-kit report wrote no ./jax-kit-reports/matrix.md"

for project in "$WORK/project-a" "$WORK/project-b"; do  # the index's pages went to the user cache too
  [ ! -e "$project/.cache" ] || fail "$project/.cache was written (the index's pages belong in the user cache)"
done

step "nothing written into the installed package or the repository"
site_after="$(cd "$site" && find . -type f | sort)"
[ "$site_before" = "$site_after" ] || fail "files appeared in site-packages: $(diff <(echo "$site_before") <(echo "$site_after") | head)"
changed="$(find "$site" -newer "$WORK/installed" | head)"
[ -z "$changed" ] || fail "site-packages changed: $changed"
repo_after="$(git -C "$REPO" status --porcelain --ignored)"
[ "$repo_after" = "$repo_before" ] \
  || fail "git status of the repository changed: $(diff <(echo "$repo_before") <(echo "$repo_after") | head)"
changed="$(find "$REPO" -path "$REPO/.git" -prune -o -newer "$WORK/started" -print | head)"
[ -z "$changed" ] || fail "written in the repository: $changed"
step "ok: $(basename "$wheel") from a fresh venv; reports in each project; one build of jax 0.6.0 for two projects"
