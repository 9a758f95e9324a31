"""Run BY the environment's interpreter: bytecode for an overlay's own files, from a cache shared by commits.

    python bytecode_child.py CACHE FOLDER

Stdlib only, Python 3.9+: it runs in every JAX environment the kit builds.
:mod:`kit.install.bytecode` explains why; here is only how. Each regular
``.py`` file under FOLDER (symlinks and linked folders are the installed
package's, left alone) gets its ``__pycache__`` entry copied from CACHE, where
it is filed under a hash of its source and of this interpreter's bytecode
magic; a file not in CACHE is compiled, then filed. Entries are checked-hash
pycs (PEP 552): Python re-hashes the source on import and recompiles on any
mismatch. That header check does not reach the code after it: a pyc whose
body was torn or overwritten imports into "ValueError: bad marshal data", in
every probe that copies it. So each entry is filed with the SHA-256 of its
pyc after it, and is copied only when that hash, its magic and its source
hash all match; one that does not is dropped and compiled again. A bad entry
costs time, never changes what runs. Prints one line,
``<copied> <compiled> <failed> <dropped>``.
"""

import hashlib
import importlib.util
import os
import py_compile
import sys
from typing import List


def cached_name(source: bytes) -> str:
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER + source).hexdigest()
    return os.path.join(sys.implementation.cache_tag, digest[:2], digest + ".pyc")


def sources(folder: str) -> List[str]:
    found = []
    for here, folders, files in os.walk(folder):  # os.walk does not enter linked folders
        folders[:] = [name for name in folders if name != "__pycache__"]
        found += [os.path.join(here, name) for name in files
                  if name.endswith(".py") and not os.path.islink(os.path.join(here, name))]
    return found


def file_away(pyc: str, cached: str) -> None:
    """Into the cache atomically, the pyc's own hash after it: another bisect may read the same entry now."""
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    with open(pyc, "rb") as handle:
        code = handle.read()
    partial = "%s.%d.tmp" % (cached, os.getpid())
    with open(partial, "wb") as handle:
        handle.write(code + hashlib.sha256(code).digest())
    os.replace(partial, cached)


def verified(entry: bytes, source: bytes) -> "bytes | None":
    """The pyc a cache entry holds, if it is whole and of this source and Python; None otherwise.

    Header, then code, then the SHA-256 of both: a torn write, a changed byte
    or an entry of another format fails the hash; the header must be this
    interpreter's magic and a checked hash of ``source``, as the import wants.
    """
    code, digest = entry[:-32], entry[-32:]
    if len(code) < 16 or hashlib.sha256(code).digest() != digest:
        return None
    header_ok = (code[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(code[4:8], "little") == 0b11
                 and code[8:16] == importlib.util.source_hash(source))
    return code if header_ok else None


COPIED, ABSENT, DROPPED = "copied", "absent", "dropped"


def copy_cached(cached: str, source: bytes, pyc: str) -> str:
    """Copy the cache's entry for ``source`` to ``pyc`` if it holds a good one; a bad one is dropped."""
    try:
        with open(cached, "rb") as handle:
            code = verified(handle.read(), source)
    except OSError:
        return ABSENT  # not there (or unreadable): compiled and filed afresh
    if code is None:
        try:
            os.remove(cached)
        except OSError:
            pass  # another bisect dropped it first; filing the new one replaces it anyway
        return DROPPED
    os.makedirs(os.path.dirname(pyc), exist_ok=True)
    with open(pyc, "wb") as handle:
        handle.write(code)
    return COPIED


def main(cache: str, folder: str) -> None:
    copied = compiled = failed = dropped = 0
    for source in sources(folder):
        with open(source, "rb") as handle:
            text = handle.read()
        cached = os.path.join(cache, cached_name(text))
        pyc = importlib.util.cache_from_source(source)
        found = copy_cached(cached, text, pyc)
        if found == COPIED:
            copied += 1
            continue
        dropped += found == DROPPED
        try:
            py_compile.compile(source, cfile=pyc, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        except (py_compile.PyCompileError, OSError, ValueError):
            failed += 1  # left to the import, which says what is wrong with the file where it matters
            continue
        file_away(pyc, cached)
        compiled += 1
    print(copied, compiled, failed, dropped)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
