"""Code that drives nox. Its folders follow the way a record takes:

* ``install/``: how does release X get onto this machine?
* ``run/``: run one check, keep one record;
* ``matrix/``: every cell, and the page people read;
* ``bisect/``: which release changed it?

What all of them use (cli, config, errors, atomic_files, metrics) stays at the top.

Runs in the nox process, never inside a JAX environment.
"""

__version__ = "0.1.0"
