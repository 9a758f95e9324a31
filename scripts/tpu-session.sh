#!/usr/bin/env bash
# The kit on a real TPU chip, one step after another (issue 48, item 3): run from the repository's root on the
# TPU machine, with the interpreter that holds its JAX as `python3`; logs and records go to $OUT.
#
#   OUT=/some/folder scripts/tpu-session.sh
#   OUT=/some/folder STEPS="audit explain_target" scripts/tpu-session.sh   # only the steps named
#
# The machine has no network: nothing is installed from an index. The kit's driver needs `packaging` and
# `filelock`; where they are not importable, their wheels are taken from .whl-tpu/ (carried beside the tree)
# into /tmp/site, added to PYTHONPATH (never replacing it: it names JAX's folder). One process at a time
# holds the chip (opening it takes seconds), so the steps never overlap; each has its own time limit, and
# the whole stays within BUDGET_S (8 minutes by default). Files in $OUT (8 at most):
#   session.log   what ran, for how long, and how each step ended
#   scaling.log   python3 -m kit run scaling --python python3
#   correctness.log  python3 -m kit run correctness --python python3 --preset tpu
#   explain.log   python3 -m kit explain examples/programs/train_slogdet.py --python python3
#   bench.log     benchmarks/tpu_slogdet_chip.py: slogdet vs a matmul control, 16×16 and 32×32, batch 1024..65536
#   bench.json    the same rows
#   audit.log     python3 -m kit audit --python python3: the catalogue's checks on the chip (not in the default STEPS)
#   explain_target.log  explain --target tpu:v5e:2x2 beside the chip: the TPU compiler's HLO for a slice (likewise)
#   scaling_target.log  run scaling --target tpu:v5e:2x2 beside the chip (likewise)
#   audit_target.log  audit --python python3 --target tpu:v5e:2x2: the catalogue's entries compiled for a slice (likewise)
#   records.tar.gz  the JSON records and reports the kit wrote in this session
set -uo pipefail
OUT="${OUT:?set OUT to the folder whose files come back}"
BUDGET_S="${BUDGET_S:-470}"
STEPS="${STEPS:-scaling correctness explain bench}"
mkdir -p "$OUT"
LOG="$OUT/session.log"
START=$(date +%s)
say() { echo "[tpu-session $(( $(date +%s) - START ))s] $*" | tee -a "$LOG"; }
fail() { say "FAILED: $*"; exit 1; }

# step NAME LIMIT_S CMD...: CMD's output into $OUT/NAME.log, within LIMIT_S and what is left of the budget.
step() {
    local name="$1" limit="$2"; shift 2
    case " $STEPS " in *" $name "*) ;; *) return ;; esac
    local left=$(( BUDGET_S - ($(date +%s) - START) ))
    (( limit > left )) && limit=$left
    if (( limit < 20 )); then say "$name: skipped, ${left}s of the budget left"; return; fi
    say "$name: $* (limit ${limit}s)"
    local began=$(date +%s) code=0
    timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1 || code=$?
    local took=$(( $(date +%s) - began ))
    case $code in
        0) say "$name: exit 0 in ${took}s" ;;
        124|137) say "$name: stopped at its limit (${limit}s)" ;;
        *) say "$name: exit $code in ${took}s" ;;
    esac
    tail -n 4 "$OUT/$name.log" | sed "s/^/    /" | tee -a "$LOG"
}

[ -f kit/__main__.py ] && [ -f repro/correctness.py ] || fail "run this from the repository's root (no kit/ here: $PWD)"
PY="$(command -v python3)" || fail "no python3 on PATH"
say "python3 is $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])')); PYTHONPATH=${PYTHONPATH:-}"
# JAX first: without it there is nothing to run, and that is one sentence, not four failed steps.
"$PY" -c 'import jax, jaxlib, numpy, scipy' 2>> "$LOG" \
    || fail "$PY cannot import jax, jaxlib, numpy and scipy (session.log has why): this script runs an existing JAX, it installs none"

# The kit's driver: packaging and filelock (tomli too, on Python 3.10 and older).
NEEDED="packaging filelock"
# explain --target exports the program (jax.export's serialization imports flatbuffers).
case " $STEPS " in *" explain_target "*) NEEDED="$NEEDED flatbuffers" ;; esac
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || NEEDED="$NEEDED tomli"
missing=""
for module in $NEEDED; do "$PY" -c "import $module" 2> /dev/null || missing="$missing $module"; done
if [ -n "$missing" ]; then
    say "not importable here:$missing; installing them from .whl-tpu/ (no index is asked)"
    ls .whl-tpu/*.whl > /dev/null 2>&1 || fail "no .whl-tpu/*.whl to install$missing from (carry the folder along)"
    if "$PY" -m pip --version > /dev/null 2>&1; then
        "$PY" -m pip install --quiet --no-index --no-deps --target /tmp/site .whl-tpu/*.whl >> "$LOG" 2>&1 \
            || fail "pip could not install .whl-tpu/*.whl into /tmp/site"
    else  # no pip in that Python (a uv venv): a pure-Python wheel installs by unpacking it
        for wheel in .whl-tpu/*.whl; do
            "$PY" -m zipfile -e "$wheel" /tmp/site >> "$LOG" 2>&1 || fail "could not unpack $wheel into /tmp/site"
        done
    fi
    export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}/tmp/site"
    for module in $missing; do "$PY" -c "import $module" 2>> "$LOG" || fail "$module still not importable"; done
fi

touch /tmp/tpu-session.started
"$PY" -c 'import jax; d = jax.devices(); print(jax.__version__, jax.default_backend(), len(d), d[0].device_kind,
          d[0].memory_stats() and d[0].memory_stats().get("bytes_limit"))' > "$OUT/chip.txt" 2>&1
say "chip: $(tail -n 1 "$OUT/chip.txt")"
rm -f "$OUT/chip.txt"  # said in session.log; the 8 files are for the steps

step scaling 110 "$PY" -m kit run scaling --python "$PY"
step correctness 200 "$PY" -m kit run correctness --python "$PY" --preset tpu
step explain 70 "$PY" -m kit explain examples/programs/train_slogdet.py --python "$PY"
step bench 150 "$PY" benchmarks/tpu_slogdet_chip.py --json "$OUT/bench.json"
step audit 240 "$PY" -m kit audit --python "$PY"
step explain_target 150 "$PY" -m kit explain examples/programs/train_slogdet.py --python "$PY" --target tpu:v5e:2x2
step audit_target 150 "$PY" -m kit audit --python "$PY" --target tpu:v5e:2x2
step scaling_target 150 "$PY" -m kit run scaling --python "$PY" --target tpu:v5e:2x2

# What the kit wrote in this session (records and reports), in one file.
find reports -newer /tmp/tpu-session.started -type f \( -name '*.json' -o -name '*.md' \) -print0 2> /dev/null \
    | tar --null -czf "$OUT/records.tar.gz" --files-from=- 2>> "$LOG"
say "records: $(tar -tzf "$OUT/records.tar.gz" 2> /dev/null | wc -l) file(s) in records.tar.gz; done in $(( $(date +%s) - START ))s"
