"""The short answer: the worst fingerprints in words, across releases, matched against known problems.

At most `MAX_LINES` console lines: a header, per release what is whole or
gathered (the worst source lines, by bytes moved and work repeated), the
expected communication said once, each known problem a differing fingerprint
matches, and which release to pick: the lowest measured one where every
fingerprint is split, or a known fix's release at or below it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ..hlo import HOLDS_WHOLE, Fingerprint, FingerprintState
from ..hlo import COLLECTIVES, UNTOLD
from ..run.shared_runs import partitions
from .capture import Capture, devices_had
from .known import KnownFingerprint
from . import rule
from ..known.signs import Match
from ..records import release_key
from ..targets import Target

MAX_LINES = 12
COLLECTIVE_KINDS = COLLECTIVES
WORST_SHOWN = 3
EXPECTED_SHOWN = 3  # source lines the expected line names; the rest are counted
UNNAMED = "(an op the compiler left without a name or source line)"  # source lines per release in the short answer; the table has them all

_VERBS = {"lu": ("factorises", "LU"), "cholesky": ("factorises", "Cholesky"), "qr": ("factorises", "QR"),
          "geqrf": ("factorises", "QR"), "householder_product": ("multiplies", "Householder product"),
          "triangular_solve": ("solves", "triangular solves"), "eigh": ("diagonalises", "eigh"),
          "eig": ("diagonalises", "eig"), "svd": ("decomposes", "SVD")}


@dataclass(frozen=True)
class SourceLine:
    """One source line's flagged fingerprints on one release, and what they cost."""

    location: str
    call: str
    prints: tuple[Fingerprint, ...]

    @property
    def bytes_moved(self) -> int:
        return sum(f.bytes_per_device for f in self.prints if f.op.startswith(("all-", "reduce-", "collective")))

    @property
    def repeated(self) -> int:
        return sum((f.global_batch or 0) for f in self.prints if f.state in HOLDS_WHOLE)


def flagged_lines(capture: Capture, cwd: Path) -> list[SourceLine]:
    """The release's source lines with a whole, gathered or communication fingerprint, worst first."""
    by_line: dict[str, list[Fingerprint]] = {}
    for fingerprint in capture.fingerprints:
        if fingerprint.flagged:
            by_line.setdefault(_line_of(fingerprint), []).append(fingerprint)
    lines = [SourceLine(UNTOLD if where.startswith(UNTOLD) else where,
                        _call(where, _named_by(prints), cwd), tuple(prints)) for where, prints in by_line.items()]
    return sorted(lines, key=lambda line: (-line.bytes_moved, -line.repeated, line.location))


def _named_by(prints: Sequence[Fingerprint]) -> str:
    """The function a line's sentence is named for: its linalg op's, not an all-gather's (kernel_ridge.py:27 on
    TPU 0.12.0.1 read "`add`: every device factorises ... (LU)", named for the add the gather was placed at)."""
    return next((f.function for f in prints if f.op not in COLLECTIVE_KINDS), prints[0].function)


def _line_of(fingerprint: Fingerprint) -> str:
    """Where a fingerprint is said: its source line; ops whose line cannot be told, one group per JAX function
    (jax 0.8.3's TPU module: eigh's, solve's and slogdet's untold ops were said as one call, `slogdet`)."""
    where = fingerprint.location or fingerprint.op_path or UNNAMED
    return f"{UNTOLD} {fingerprint.function}" if where == UNTOLD else where


def sentence(line: SourceLine) -> str:
    """``train.py:37 `jnp.linalg.slogdet`: every device factorises all 1024 matrices (LU, forward), ...``."""
    work = [f for f in line.prints if f.state in HOLDS_WHOLE]
    parts: list[str] = []
    feeds: list[tuple[str, int, int, str]] = []  # per op fed: its word, how many collectives, their bytes, their kind
    fed_sets: list[frozenset[str]] = []
    for op in dict.fromkeys(f.op for f in work):
        same = [f for f in work if f.op == op]
        verb, word = _VERBS.get(op, ("runs", op))
        passes = " and ".join(dict.fromkeys(f.pass_ for f in same))
        batch = max((f.global_batch or f.device_batch or 0) for f in same)
        things = "matrices" if not parts else ""
        if batch <= 1 and any(f.in_loop for f in same):
            # One matrix an iteration of a loop (`lax.map` over the gathered batch): "all 1 matrices" was 256 times
            # too few (t9); the loop's trip count is not read, so how many is not said.
            parts.append(f"{verb} one matrix per iteration of a loop ({word}, {passes})")
        else:
            parts.append(f"{verb} all {batch} {things}".rstrip() + f" ({word}, {passes})")
        # Each collective is said once, at the first op it feeds: geqrf's all-gather also reaches the Householder
        # product through geqrf's result (t3's sensor_calib: one 512 KiB all-gather was said twice).
        fed = {name: moved for name, moved in _fed(same).items() if not any(name in said for said in fed_sets)}
        if fed:
            feeds.append((word, len(fed), sum(fed.values()), _fed_kind(same)))
            fed_sets.append(frozenset(fed))
    text = f"{line.location} `{line.call}`: " if line.call else f"{line.location}: "
    each = _in_modules(work) if feeds else ""
    if parts:
        text += "every device " + " and ".join(parts)
        if len(feeds) == 1:
            _, count, moved, kind = feeds[0]
            text += f", fed by {_collectives(count, kind)} of {size(moved)}" + (" in all" if count > 1 else "") + each
        elif feeds:  # each op its own: the trial's A2 said det's LU and three solves were "fed by an all-gather of 36 KiB"
            text += ", fed by " + " and ".join(f"{_collectives(count, kind)} of {size(moved)}"
                                               + (" in all" if count > 1 else "") + f" to the {word}"
                                               for word, count, moved, kind in feeds) + each
    else:
        # A function compiled again (a program that rebuilds its jitted functions each epoch) moves the same in
        # each module: said once, with how many modules (the trial's A2 said one all-reduce twice).
        moves: dict[str, int] = {}
        for f in line.prints:
            if f.state is FingerprintState.COMMUNICATION:
                said = (f"{f.op} of {size(f.bytes_per_device)} per device ({f.count}x"
                        f"{', in a loop' if f.in_loop else ''}, {f.pass_}")
                moves[said] = moves.get(said, 0) + 1
        text += "; ".join(said + (f"; the same in {n} modules)" if n > 1 else ")") for said, n in moves.items())
    return text


def _in_modules(work: Sequence[Fingerprint]) -> str:
    """How many modules a line's feed stands for, where one function was compiled into several ("" for one).

    One function compiled into several modules (a jitted method of two instances, a function rebuilt per epoch)
    gathers its share in each: the size is a call's, and how many modules is said (t5 read 128 KiB as the total);
    where the modules' shapes differ, so do their sizes (t7: 48, 64 and 96 KiB said "96 KiB in each"). Two
    functions calling one helper are summed by `_fed` instead (t5's modal :23)."""
    gathered = [f for f in work if f.state is FingerprintState.GATHERED]
    if len({f.module for f in gathered}) != 1:
        return ""
    moved_in: dict[str, int] = {}  # each module's bytes fed to the line's gathered ops
    for f in gathered:
        for key, moved in f.fed.items():
            moved_in[key.partition("/")[0]] = moved_in.get(key.partition("/")[0], 0) + moved
    if len(moved_in) <= 1:
        return ""
    low, high = min(moved_in.values()), max(moved_in.values())
    return (f", in each of the {len(moved_in)} modules compiled from it" if low == high else
            f", in one of the {len(moved_in)} modules compiled from it ({size(low)} to {size(high)} in each)")


def _fed(work: Sequence[Fingerprint]) -> dict[str, int]:
    """Each collective feeding the gathered ones of ``work`` once, however many of them it feeds (0.5.3 on GPUs:
    the forward and backward solves of one inv fed by the same two all-gathers were said as 320 KiB where they
    move 128 KiB), with the bytes it delivers to each device.

    One module compiled again (a program rebuilding its jitted functions each epoch) gathers the same per call:
    its collectives are told apart by the module's name, not its number in the dump (the trial's A1 said 256 KiB
    where each call gathers 128 KiB)."""
    fed: dict[str, int] = {}
    for f in work:
        if f.state is FingerprintState.GATHERED:
            fed.update({f"{f.module}/{key.partition('/')[2]}": count for key, count in f.fed.items()}
                       or {f"{id(f)}": f.bytes_per_device})  # a record from before `fed` was kept
    return fed


def _collectives(count: int, kind: str) -> str:
    """``an all-gather``, ``a reduce-scatter``, ``4 all-gathers``."""
    if count > 1:
        return f"{count} {kind}s" if " " not in kind else f"{count} collectives ({kind})"
    return ("an " if kind[:1] in "aeiou" else "a ") + kind


def expected_sentence(captures: Sequence[Capture]) -> str:
    """The expected communication, once: each line's size per device, with the releases it is on where it is not
    on every release at one size ("" for none). Every release read is named on each line, those where the line
    sums nothing as "none on": the held-out trial's A2 said "spectral_windows.py:24 (4 B per device on 0.5.3; 148 B
    per device on 0.8.0, 0.12.0)" and left 0.4.35 out, whose QR of the whole batch sums its loss on each device.
    Lines past the third are counted, never dropped unsaid."""
    read = [c.release or "this interpreter" for c in captures if c.fingerprints]
    sizes: dict[str, dict[str, int]] = {}
    for capture in captures:
        release = capture.release or "this interpreter"
        # A line's sums of one module add up over their passes (0.4.35's :18 sums the loss, 4 B forward, and a
        # gradient, 256 B backward: 260 B); modules of one name (one function jitted several times) each
        # give their own, and the worst is said.
        by_module: dict[tuple[str, str], dict[tuple[str, str, str], int]] = {}
        for f in capture.fingerprints:
            if f.state is FingerprintState.EXPECTED:
                mine = by_module.setdefault((f.location or f.op_path or UNNAMED, f.module), {})
                key = (f.function, f.op, f.pass_)
                mine[key] = max(mine.get(key, 0), f.bytes_per_device)
        for (location, _), by_key in by_module.items():
            line = sizes.setdefault(location, {})
            line[release] = max(line.get(release, 0), sum(by_key.values()))
    if not sizes:
        return ""
    shown = sorted(sizes.items())[:EXPECTED_SHOWN]
    alike = all(set(by) == set(read) and len(set(by.values())) == 1 for _, by in shown)
    parts = []
    for location, by in shown:
        groups: dict[str, list[str]] = {}
        for release in read:
            said = f"{size(by[release])} per device" if release in by else "none"
            groups.setdefault(said, []).append(release)
        everywhere = list(groups) != ["none"] and len(groups) == 1
        said = "; ".join(how + ("" if alike else " on every release" if everywhere else f" on {', '.join(on)}")
                         for how, on in groups.items())
        parts.append(f"{location} ({said})")
    more = len(sizes) - len(shown)
    # A TPU svd's QDWH loop sums its u32 trip count over the devices too: not only gradients (t5's wording).
    return ("expected, not flagged: the all-reduces that combine the devices' parts (sums, gradients, maxima, "
            "a loop's trip count) at " + ", ".join(parts)
            + (", on every release" if alike else "") + (f"; and {more} more line(s) in the tables" if more else ""))


def matched_problems(captures: Sequence[Capture], known: Iterable[KnownFingerprint],
                     platform: str, target: str = "") -> list[tuple[KnownFingerprint, Match]]:
    """The catalogue entries a fingerprint matches that differs between releases (or is flagged on the only one),
    each with its best match on ``platform``, full matches first, then an entry naming the ``target`` compiled
    for (the GPU entry on a GPU target, before the entry for CPUs and GPUs both), then by the parts that agreed."""
    states: dict[tuple[str, ...], set[str]] = {}
    for capture in captures:
        for f in capture.fingerprints:
            states.setdefault(f.key, set()).add(f.state)
    found = []
    for problem in known:
        matches = []
        for capture in captures:
            by_line = _by_line(capture.fingerprints)
            # A problem is flagged the same on every release it is in: an open one (no fix upstream) everywhere,
            # a fixed one below its fix (0.4.13 and 0.4.18 explained together match sharded-slogdet, not only
            # the open TPU entry); a flag on a release at or past the fix is something else.
            differs = [f for f in capture.fingerprints
                       if len(states[f.key]) > 1 or len(captures) == 1
                       or (f.flagged and _before_fix(capture.release, problem.fix_release))]
            matches += [m for m in (problem.matches(f, by_line[f.location or f.op_path], platform) for f in differs)
                        if m is not None]
        if matches:
            found.append((problem, max(matches, key=_strength)))
    return sorted(found, key=lambda pair: (pair[1].full, bool(target) and target in pair[0].targets,
                                           *_strength(pair[1])[1:], -len(pair[0].shows_on)), reverse=True)


def _before_fix(release: str, fix_release: str) -> bool:
    """Whether ``release`` can still have a problem first fixed in ``fix_release`` ("": open; an unnamed release,
    an interpreter's own, cannot be placed and is not ruled out)."""
    return not fix_release or not release or release_key(release) < release_key(fix_release)


def _strength(match: Match) -> tuple[bool, int, int]:
    return (match.full, len(match.agreed), -len(match.missed))


def known_sentence(matched: Sequence[tuple[KnownFingerprint, Match]]) -> list[str]:
    """The best match as its entry's sentence, the other entries matched in part named on the same line."""
    if not matched:
        return []
    problem, match = matched[0]
    also = [p.key for p, m in matched[1:] if m.full]
    others = [f"{p.key} ({m.how_well().split(': ')[0]}; not: {', '.join(m.missed)})" for p, m in matched[1:]
              if not m.full]
    return [problem.sentence(match) + (f"; also matched in full: {', '.join(also)}" if also else "")
            + (f"; in part: {'; '.join(others)}" if others else "")]


def choice(captures: Sequence[Capture], problems: Sequence[KnownFingerprint], target: Target | None = None) -> str:
    """Which release to pick, derived from the per-release tables by `rule.derive` alone: the lowest measured
    release from which every measured one splits every op (or a known fix at or below it that no measured release
    contradicts); where there is none, what was measured, and nothing of what was not."""
    measured = [c for c in captures if c.compiled]
    if not measured:
        return "answer: nothing compiled on any release, so there is nothing to explain (the records say why)"
    if not any(partitions(m) > 1 for c in measured for m in c.modules):
        # One device (a single TPU chip, --devices 1), or several and no sharded input: nothing was partitioned, so
        # nothing can show split or whole.
        return (f"answer: {_unpartitioned(measured)}, so this run cannot show whether an op splits; "
                + ("shard the batch the op reads (jax.device_put with a NamedSharding)" if _many_devices(measured)
                   else "run it on several devices, or compile for a slice with --target (e.g. tpu:v5e:2x2)"))
    if not any(f.state in (FingerprintState.SPLIT, *HOLDS_WHOLE, FingerprintState.CANNOT_TELL)
               for c in measured for f in c.fingerprints):
        # Something was partitioned (an elementwise step, a sum), but no linear-algebra op read a sharded batch:
        # "every op is split" would be said of ops that never were.
        names = ", ".join(c.release or "this interpreter" for c in measured)
        return (f"answer: on {names} no linear-algebra op read a sharded batch (what was partitioned holds none), "
                "so nothing there shows whether an op splits; shard the batch the op reads")
    answer = rule.derive(table(measured))
    on = f"for {target.title} (compiled for it, not run)" if target is not None else ""
    fix = max((p.fix_release for p in problems if p.fix_release), key=_order, default="")
    said = rule.answer_line(answer, on, fix)
    unfixed = next((p for p in problems if not p.fix_release), None)
    if not answer.pick and unfixed is not None:
        said += f"; {unfixed.key} has no fix upstream" + (f": try {unfixed.workaround}" if unfixed.workaround else "")
    return said


def per_op(captures: Sequence[Capture]) -> str:
    """The per-op line under the answer: the lowest measured release that splits each op not split everywhere
    ("" where there is nothing to say), from the same tables as `choice`."""
    measured = [c for c in captures if c.compiled]
    if not measured or not any(partitions(m) > 1 for c in measured for m in c.modules):
        return ""
    return rule.op_line(rule.derive(table(measured)))


_RULE_STATES = {FingerprintState.SPLIT: rule.SPLIT, FingerprintState.WHOLE: rule.WHOLE,
                FingerprintState.GATHERED: rule.WHOLE, FingerprintState.CANNOT_TELL: rule.UNTOLD}
_WORST = (rule.WHOLE, rule.UNTOLD, rule.SPLIT)


def table(measured: Sequence[Capture]) -> rule.Table:
    """The per-release tables as the rule reads them: each linalg op's state per release (the worst, where a
    release holds it more than once), releases oldest first, and what of each release could not be read."""
    ordered = sorted(measured, key=lambda c: release_key(c.release) if c.release else (1 << 30, ""))
    releases = tuple(c.release or "this interpreter" for c in ordered)
    rows: dict[tuple[str, ...], tuple[str, dict[str, str]]] = {}
    told = _told_lines(ordered)
    for release, capture in zip(releases, ordered):
        for f in capture.fingerprints:
            state = _RULE_STATES.get(f.state)
            if state is None:
                continue
            where = f.location or f.op_path
            if where == UNTOLD and len(told.get(f.key[1:], ())) == 1:
                # the same JAX function's op on the one line other releases place it: one op, not two (jax
                # 0.8.3's TPU module has no line for it; the answer counted :28's lu and an untold lu apart)
                where = next(iter(told[f.key[1:]]))
            name = f"{where} {f.op}" + (f" ({f.pass_})" if f.pass_ != "forward" else "")
            states = rows.setdefault((where, *f.key[1:]), (name, {}))[1]
            states[release] = min(states.get(release, state), state, key=_WORST.index)
    untold = {release: unseen(capture) for release, capture in zip(releases, ordered)}
    return rule.Table(releases, tuple(rule.OpRow(name, states) for name, states in
                                      (rows[key] for key in sorted(rows))), untold)


def _told_lines(captures: Sequence[Capture]) -> dict[tuple[str, ...], set[str]]:
    """Per (function, op, pass): the source lines the releases that could tell place it on."""
    told: dict[tuple[str, ...], set[str]] = {}
    for capture in captures:
        for f in capture.fingerprints:
            if f.location and f.location != UNTOLD:
                told.setdefault(f.key[1:], set()).add(f.location)
    return told


def unseen(capture: Capture) -> int:
    """The program's computations nothing was read of on this release: not compiled (the target's compiler
    refused them), not exported, past the kit's bound, or dropped whole from a dump past its size limit (at
    least one where the dump dropped files of modules it did not read)."""
    target = capture.section("target")
    failed = target.get("failed")
    counts = target.get("counts")
    gaps = len(failed) if isinstance(failed, list) else 0
    if isinstance(counts, dict):
        gaps += sum(n for key in ("failed", "over_limit") if isinstance(n := counts.get(key), int))
    return (gaps or capture.uncompiled) + _dropped_modules(capture)  # a failed compile's module: counted once


def _dropped_modules(capture: Capture) -> int:
    dump = capture.section("dump")
    names = dump.get("dropped")
    if not dump.get("dropped_count") or not isinstance(names, list):
        return 0
    read = {m.get("number") for m in capture.modules}
    numbers = {int(found.group(1)) for name in names if (found := re.match(r"module_(\d+)\.", str(name)))}
    return max(len(numbers - read), 0 if numbers else 1)


def _device_counts(measured: Sequence[Capture]) -> list[int]:
    """The devices each release's JAX had: the program's own count where it said, else the kit's."""
    counts = [devices_had(c) or c.section("environment").get("device_count") for c in measured]
    return [n for n in counts if isinstance(n, int) and not isinstance(n, bool)]


def _many_devices(measured: Sequence[Capture]) -> bool:
    return any(n > 1 for n in _device_counts(measured))


def _unpartitioned(measured: Sequence[Capture]) -> str:
    if _many_devices(measured):
        return (f"nothing was partitioned over the {max(_device_counts(measured))} devices JAX had "
                "(no computation took a sharded input)")
    return "nothing was partitioned over devices (one device)"


def size(count: int) -> str:
    """Bytes as people read them: 256 KiB, 1.0 MiB."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            value = count / scale
            return f"{value:.1f} {unit}" if value < 10 and unit != "KiB" else f"{value:.0f} {unit}"
    return f"{count} B"


def _fed_kind(work: Sequence[Fingerprint]) -> str:
    kinds = sorted({k for f in work for k in f.fed_by})
    return " and ".join(kinds) if kinds else "collective"


def _by_line(prints: Iterable[Fingerprint]) -> dict[str, list[Fingerprint]]:
    found: dict[str, list[Fingerprint]] = {}
    for f in prints:
        found.setdefault(f.location or f.op_path, []).append(f)
    return found


def _call(location: str, function: str, cwd: Path) -> str:
    """What the source line calls, as written there (``jnp.linalg.slogdet``); the function where unreadable."""
    file, _, number = location.rpartition(":")
    if not number.isdigit() or not function:
        return function if function or location != UNNAMED else ""
    try:
        with open(cwd / file, encoding="utf-8", errors="replace") as source:
            text = next((line for index, line in enumerate(source, 1) if index == int(number)), "")
    except OSError:
        return function
    found = re.search(rf"[A-Za-z_][\w.]*\b{re.escape(function)}\b", text)
    if found:
        return found.group(0)
    code = text.split("#", 1)[0].strip()  # an operator (``x @ w``) names no function: the line's code does
    return (code if len(code) <= 48 else code[:45] + "...") or function


def _order(version: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))
