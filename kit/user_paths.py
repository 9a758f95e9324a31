"""A path the user gave, checked where it enters: what is there, in one sentence when it is not what was asked;
and how a report shows a path, so that no machine's absolute path lands in a report pasted into a bug thread.

``Path.is_file()`` and ``is_dir()`` answer False for a path that does not
exist, a symbolic link loop, a folder where a file was asked, a named pipe
and a part of the path that is no folder alike, so a check built on them can
only say "not found". These say which it is, so the ERROR line names the
mistake: a mistyped folder, a link that loops, a FIFO given as a file.
"""

from __future__ import annotations

import ast
import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Sequence
from urllib.parse import urlsplit

from .errors import ConfigError, KitError, UsageError

FIND_LINKS_TIP = "give a folder of wheels (.whl files) or the URL of a find-links page"


def folder_problem(path: Path) -> str | None:
    """Why ``path`` is not a folder the kit can list (``does not exist``, ``is a file, not a folder``, ...), or None."""
    mode, problem = _mode(path)
    if problem:
        return problem
    if stat.S_ISREG(mode):
        return "is a file, not a folder"
    if not stat.S_ISDIR(mode):
        return "is not a folder (a pipe, a device or a socket)"
    if not os.access(path, os.R_OK | os.X_OK):
        return "is a folder this user cannot read (permission denied)"
    return None


def folder_or_nothing_yet(path: Path, where: str, error: type[KitError] = ConfigError) -> Path:
    """``path`` when it is a folder or nothing is there yet (the kit makes it); else ``error`` naming what is there.

    For matrix.toml's results and environments folders: a file there would
    be found only when the first record or environment is written, after
    the first check has run for nothing.
    """
    if os.path.lexists(path):
        problem = folder_problem(path)
        if problem:
            raise error(f"{where} {str(path)!r} {problem}", "name a folder (it is made when first needed)")
    return path


def writable_folder(path: Path, where: str) -> Path:
    """``path``, made (with its parents) if need be and shown to take a file; else `UsageError` in one sentence.

    For ``--out``: a file given there, a folder inside a file, or one no file can be made in (``/proc/1``, a
    read-only mount) is found now, before anything runs, not as a traceback when the first record is written.
    """
    tip = "name a folder you can write (it is made when it is not there yet)"
    climbed = path
    while not os.path.lexists(climbed) and climbed.parent != climbed:
        climbed = climbed.parent
    problem = folder_problem(climbed) if os.path.lexists(climbed) else None
    if problem:
        inside = "" if climbed == path else f" ({str(climbed)!r}, a part of it, {problem})"
        raise UsageError(f"{where} {str(path)!r} {problem if climbed == path else 'cannot be made'}{inside}", tip)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = tempfile.mkstemp(dir=path, prefix=".kit-probe-")
        os.close(probe[0])
        os.unlink(probe[1])
    except OSError as error:
        raise UsageError(f"{where} {str(path)!r} cannot be written: no file can be made there "
                         f"({error.strerror or error})", tip) from None
    return path


def results_outside(results: Path, project: Path) -> str:
    """One sentence where the results folder (a link followed) leads outside ``project``: the kit writes records
    there (and reports beside the folder), so the user hears where before anything is written; "" where it stays
    inside."""
    try:
        where, inside = results.resolve(), project.resolve()
    except (OSError, RuntimeError):  # a link loop: said where the folder is checked
        return ""
    if where.is_relative_to(inside):
        return ""
    through = f" (through the link {results})" if where != Path(os.path.abspath(results)) else ""
    reports = Path(os.path.abspath(results)).parent.resolve()
    also = f" and reports (matrix.md, bisect-*.md) to {reports}" if not reports.is_relative_to(inside) else ""
    return f"kit.results_dir leads outside the project {inside}{through}: records are written to {where}{also}"


def file_problem(path: Path) -> str | None:
    """Why ``path`` is not a regular file the kit can read (``is a folder, not a file``, ...), or None.

    A named pipe or a device (/dev/zero) is refused: reading one would wait forever or never end.
    """
    mode, problem = _mode(path)
    if problem:
        return problem
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a pipe, a device or a socket)"
    if not os.access(path, os.R_OK):
        return "is a file this user cannot read (permission denied)"
    return None


def script_bytes(path: Path, check: str) -> bytes:
    """A check's script, read now (to hash it, as each record of it does); `ConfigError` when it is no longer a
    file there: it was one when matrix.toml was read, so it went missing since (mid-sweep, say)."""
    problem = file_problem(path)
    try:
        if problem is None:
            return path.read_bytes()
    except OSError as exc:
        problem = f"could not be read ({exc.strerror})"
    raise ConfigError(f"checks.{check}'s script {path} {problem}: it was there when matrix.toml was read, "
                      "so it went missing since", f"put it back (git status shows it), or remove [checks.{check}] "
                      "from matrix.toml; the records already written are kept")


def _mode(path: Path) -> tuple[int, str | None]:
    """``path``'s file mode (links followed), or 0 and why nothing can be found there."""
    try:
        return os.stat(path).st_mode, None
    except OSError as error:
        return 0, _missing(path, error)


def _missing(path: Path, error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "is a symbolic link loop (it leads back to itself)"
    if error.errno == errno.ENOENT and os.path.islink(path):
        return f"is a symbolic link to {os.readlink(path)}, which does not exist"
    if error.errno == errno.ENOENT:
        return "does not exist"
    if error.errno == errno.ENOTDIR:
        return "does not exist (a part of it is a file, not a folder)"
    if error.errno == errno.EACCES:
        return "cannot be reached (permission denied on a folder above it)"
    return f"cannot be read ({error.strerror or error})"


def is_url(text: str) -> bool:
    """Does ``text`` name a page (``https://...``, ``file://...``) rather than a path on this machine?"""
    parts = urlsplit(text)
    return len(parts.scheme) > 1 and bool(parts.netloc or parts.scheme == "file")  # "C:\\wheels" is a path


def checked_find_links(links: Sequence[str], where: str, base: Path = Path("."),
                       error: type[KitError] = UsageError) -> tuple[str, ...]:
    """``links`` as given when each can be what it names; else ``error``, one sentence naming the first that cannot.

    A URL is the network's and uv's to judge (`kit.install.pages` probes it
    before uv runs); a local path must be a folder uv can read, as uv takes
    only a folder of wheels as a path. Checked here, where it enters: uv
    would otherwise skip a missing folder with a warning and report the
    release "not installable", a record that blames the release for a typo.
    A relative path is taken from ``base`` (where uv will run), as uv reads it.
    """
    for text in links:
        problem = None if is_url(text) else folder_problem(base / text)
        if problem:
            relative = "" if Path(text).is_absolute() else f" (looked at {(base / text).absolute()})"
            raise error(f"{where} {text!r} {problem}{relative}", FIND_LINKS_TIP)
    return tuple(links)


def checked_index_url(url: str, where: str, error: type[KitError] = ConfigError) -> str:
    """A package index's URL: http(s) or file, with a host or path (``index_url = ""`` was taken, then blamed on the
    network at the first resolve)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https", "file") or not (parts.netloc or parts.path.strip("/")):
        raise error(f"{where} {url!r} is not the URL of a package index",
                    'e.g. index_url = "https://pypi.org/simple" (http, https or file://)')
    return url


SCRIPT_READ_BYTES = 1_000_000
"""A script this large has statements, whatever they are: only a smaller one is read to tell (`script_with_code`)."""


def script_with_code(script: Path) -> Path:
    """``script``, absolute, unless it holds no statement (empty, blank or comments alone): `UsageError`.

    Such a script exits 0 on every release, so each would read "unaffected":
    an empty file saved by mistake cleared every release without a word. A
    script that is not text, does not parse, or cannot be read is left to the
    run, which says so.
    """
    try:
        info = script.stat()
        text = script.read_bytes().decode("utf-8") if stat.S_ISREG(info.st_mode) and info.st_size < SCRIPT_READ_BYTES \
            else None
        empty = text is not None and not ast.parse(text).body
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        empty = False
    if empty:
        raise UsageError(f"script {script} holds no Python statement (it is empty, or comments alone): it would exit "
                         "0 on every release, and every release would read unaffected",
                         "write the check into it (docs/checks.md), or point the check at the script that has it")
    return script.resolve()


def find_links_argument(text: str) -> str:
    """``--find-links`` as argparse reads it, in every command that takes it."""
    return checked_find_links([text], "--find-links")[0]


def relative_to_what(path: Path | str) -> str:
    """For a relative path the user gave, the words saying what it was read from: ``nox`` runs in the noxfile's
    folder, not where it was started, so "does not exist" alone sent users looking in the wrong folder."""
    if os.path.isabs(path):
        return ""
    here = os.getcwd()
    nox = " (nox runs from the noxfile's folder: give an absolute path there)" \
        if os.path.isfile(os.path.join(here, "noxfile.py")) else ""
    return f" (a relative path, read from the current folder {here}{nox})"


def report_path(path: Path | str, project: Path) -> str:
    """How a report meant for a bug thread names ``path``: as `shown_path`, and a path outside both the project
    and the home folder relative to the project too (``../jax``), so no machine's absolute path is pasted."""
    shown = shown_path(path, project)
    if not os.path.isabs(shown):
        return shown
    try:
        return os.path.relpath(os.path.abspath(path), os.path.abspath(project))
    except ValueError:  # another drive (Windows): there is no relative way
        return shown


def shown_path(path: Path | str, project: Path) -> str:
    """How a report or record names ``path``: relative to the project inside it, ``~/...`` under the home folder,
    else as given.

    Tried as written (made absolute, links kept: a venv's ``bin/python`` is a link, and the venv is what ran),
    then resolved (a project reached through a link).
    """
    # realpath, not Path.resolve: a link loop (a user's bad --python) must name itself, and resolve raises there.
    roots = [(Path(os.path.abspath(project)), ""), (Path(os.path.realpath(project)), ""), (Path.home(), "~/")]
    for candidate in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
        for root, prefix in roots:
            try:
                return prefix + str(candidate.relative_to(root))
            except ValueError:
                continue
    return str(path)


def interpreter_path(text: str, folder: Path | None = None) -> Path:
    """``--python`` as ``run`` and ``explain`` read it: a bare name (``python3``) on PATH, else a path from ``folder``.

    One function for both commands, so ``--python python3`` means the same
    interpreter to each (explain once looked for ``./python3``). ``~`` is
    expanded and the path made absolute, but links are not resolved: a venv's
    ``bin/python`` links to its base interpreter, and resolving it would lose
    the venv. Whether it is a Python at all is for
    `kit.install.existing.inspect_interpreter` to find out. ``folder`` is where
    the command was called from (the current folder when None).
    """
    if os.sep not in text and not text.startswith("~"):
        found = shutil.which(text)
        if found:
            return Path(os.path.abspath(found))
    return Path(os.path.abspath(os.path.join(folder or os.getcwd(), os.path.expanduser(text))))
