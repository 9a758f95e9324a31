"""Code that drives nox: config, installs, records, bisection, reports.

Runs in the nox process, never inside a JAX environment.
"""

__version__ = "0.1.0"
