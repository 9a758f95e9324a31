"""Cut a slice of JAX's history into a git bundle the commit bisect can search offline (CI cannot reach GitHub).

    python scripts/make-history-bundle.py JAX_CLONE OUT.bundle jax-v0.9.2..jax-v0.10.0 [OLD..NEW ...]

Each range keeps every commit reachable from NEW and not from OLD's parents (so OLD itself, and the merged side
branches), with upstream's authors, dates and messages, and both tags. Trees keep only what a commit bisect
over JAX's Python reads (``KEPT`` below: the Python it lays, the XLA pin, the changelog, the licence; JAX is
Apache-2.0); parents outside the slice are cut, so the oldest commits are roots. Hashes therefore differ from
upstream: ``OUT.upstream-commits.txt`` maps each commit here (first column) to upstream's (second), as
shared/jax-history/ does. Nothing is written in JAX_CLONE: the slice is built in a scratch repository that
borrows its objects.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

KEPT = ("jax", "jaxlib", "third_party", "CHANGELOG.md", "LICENSE")
THIRD_PARTY_KEPT = ("xla",)  # third_party/ holds other pins too; the kit reads XLA's
COMMIT_FIELDS = "%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%P%x00%B"


def git(repo: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, text=True,
                          check=True, env={**os.environ, **(env or {})})
    return done.stdout


def filtered_tree(repo: Path, commit: str, memo: dict[str, str]) -> str:
    """The commit's root tree with only ``KEPT`` (and only third_party/xla); subtrees are reused, not copied."""
    entries = [line for line in git(repo, "ls-tree", commit).splitlines() if line.split("\t", 1)[1] in KEPT]
    kept = []
    for line in entries:
        mode_type_hash, name = line.split("\t", 1)
        if name == "third_party":
            sub = mode_type_hash.split()[2]
            if sub not in memo:
                inner = [x for x in git(repo, "ls-tree", sub).splitlines() if x.split("\t", 1)[1] in THIRD_PARTY_KEPT]
                memo[sub] = git(repo, "mktree", stdin="".join(x + "\n" for x in inner)).strip()
            line = f"040000 tree {memo[sub]}\t{name}"
        kept.append(line)
    return git(repo, "mktree", stdin="".join(x + "\n" for x in kept)).strip()


def cut(repo: Path, old: str, new: str, upstream: dict[str, str], rewritten: dict[str, str]) -> None:
    """Rewrite ``new``'s commits not reachable from ``old``'s parents, oldest first."""
    excluded = [f"^{p}" for p in git(repo, "rev-parse", f"{old}^@").split()]
    commits = git(repo, "rev-list", "--topo-order", "--reverse", new, *excluded).split()
    memo: dict[str, str] = {}
    for number, commit in enumerate(commits, 1):
        an, ae, ad, cn, ce, cd, parents, message = git(repo, "show", "-s", f"--format={COMMIT_FIELDS}",
                                                        commit).split("\x00", 7)
        tree = filtered_tree(repo, commit, memo)
        kept_parents = [arg for p in parents.split() if p in rewritten for arg in ("-p", rewritten[p])]
        env = {"GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
               "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd}
        made = git(repo, "commit-tree", tree, *kept_parents, stdin=message.rstrip("\n") + "\n", env=env).strip()
        rewritten[commit] = made
        upstream[made] = commit
        if number % 100 == 0:
            print(f"  {new}: {number} of {len(commits)} commits", file=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or not all(".." in r for r in argv[2:]):
        print(__doc__, file=sys.stderr)
        return 2
    clone, out, ranges = Path(argv[0]).resolve(), Path(argv[1]).resolve(), [r.split("..") for r in argv[2:]]
    with tempfile.TemporaryDirectory(prefix="kit-history-") as scratch:
        repo = Path(scratch)
        git(repo, "init", "--quiet", "--bare")
        objects = clone / ".git" / "objects" if (clone / ".git").is_dir() else clone / "objects"
        (repo / "objects" / "info" / "alternates").write_text(f"{objects}\n")
        for tag in {t for r in ranges for t in r}:  # the upstream ends, so rev-list can name them
            git(repo, "update-ref", f"refs/upstream/{tag}", git(clone, "rev-parse", f"{tag}^{{commit}}").strip())
        upstream: dict[str, str] = {}
        rewritten: dict[str, str] = {}
        for old, new in ranges:
            cut(repo, f"refs/upstream/{old}", f"refs/upstream/{new}", upstream, rewritten)
            for tag in (old, new):  # the upstream names, on the rewritten commits
                git(repo, "tag", "-f", tag, rewritten[git(repo, "rev-parse", f"refs/upstream/{tag}").strip()])
        tags = sorted({t for r in ranges for t in r})
        git(repo, "bundle", "create", str(out), *tags)
        out.with_suffix(".upstream-commits.txt").write_text("".join(f"{h} {u}\n" for h, u in upstream.items()))
    print(f"{out}: {len(upstream)} commits, {out.stat().st_size / 2**20:.1f} MiB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
