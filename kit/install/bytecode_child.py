"""Run BY the environment's interpreter: bytecode for an overlay's own files, from a cache shared by commits.

    python bytecode_child.py CACHE FOLDER

Stdlib only, Python 3.9+: it runs in every JAX environment the kit builds.
:mod:`kit.install.bytecode` explains why; here is only how. Each regular
``.py`` file under FOLDER (symlinks and linked folders are the installed
package's, left alone) gets its ``__pycache__`` entry copied from CACHE, where
it is filed under a hash of its source and of this interpreter's bytecode
magic; a file not in CACHE is compiled, then filed. Entries are checked-hash
pycs (PEP 552): Python re-hashes the source on import and recompiles on any
mismatch, so a wrong entry can cost time, never change what runs. Prints one
line, ``<copied> <compiled> <failed>``.
"""

import hashlib
import importlib.util
import os
import py_compile
import shutil
import sys


def cached_name(source: bytes) -> str:
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER + source).hexdigest()
    return os.path.join(sys.implementation.cache_tag, digest[:2], digest + ".pyc")


def sources(folder: str) -> list:
    found = []
    for here, folders, files in os.walk(folder):  # os.walk does not enter linked folders
        folders[:] = [name for name in folders if name != "__pycache__"]
        found += [os.path.join(here, name) for name in files
                  if name.endswith(".py") and not os.path.islink(os.path.join(here, name))]
    return found


def file_away(pyc: str, cached: str) -> None:
    """Into the cache atomically: another bisect may read the same entry now."""
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    partial = "%s.%d.tmp" % (cached, os.getpid())
    shutil.copyfile(pyc, partial)
    os.replace(partial, cached)


def main(cache: str, folder: str) -> None:
    copied = compiled = failed = 0
    for source in sources(folder):
        with open(source, "rb") as handle:
            cached = os.path.join(cache, cached_name(handle.read()))
        pyc = importlib.util.cache_from_source(source)
        if os.path.exists(cached):
            os.makedirs(os.path.dirname(pyc), exist_ok=True)
            shutil.copyfile(cached, pyc)
            copied += 1
            continue
        try:
            py_compile.compile(source, cfile=pyc, doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        except (py_compile.PyCompileError, OSError, ValueError):
            failed += 1  # left to the import, which says what is wrong with the file where it matters
            continue
        file_away(pyc, cached)
        compiled += 1
    print(copied, compiled, failed)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
