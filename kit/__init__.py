"""Code that drives nox. Its folders follow the way a record takes:

* ``install/``: how does this run get its Python (how does release X get onto this machine)?
* ``run/``: run one check, keep one record;
* ``matrix/``: every cell, and the page people read;
* ``bisect/``: which release changed it?

What all of them read (config, records, errors, exit_codes, atomic_files,
metrics) is the bottom layer; ``cli`` is the entry point on top. Imports only
run down (tests/test_layers.py).

Runs in the nox process, never inside a JAX environment.
"""

__version__ = "0.1.0"
