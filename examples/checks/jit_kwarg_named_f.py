"""jax#25329: a jitted function cannot take a keyword argument named ``f`` (jax 0.4.36; fixed in 0.4.37).

The bug is one exception, ``TypeError: result_paths() got multiple values for
argument 'f'``. A real script meets other errors on the way (an API a release
lacks, another bug), and those are not this bug: ``bad_if`` says which
failure is. A run is affected only when the script fails *and* its output
matches; any other failure is inconclusive, skipped by a bisect and named in
its report::

    [checks.jit-kwarg-f]
    script = "checks/jit_kwarg_named_f.py"
    description = "jax#25329: jit with a keyword argument named f"
    bad_if = "got multiple values for argument 'f'"

    nox -s bisect -- --script examples/checks/jit_kwarg_named_f.py \\
        --bad-if "got multiple values for argument 'f'" --good 0.4.35 --bad 0.4.36

No KIT_RESULT, no exit code to choose: an uncaught exception exits 1, and the
kit reads its type and message from the traceback.
"""

import jax


def scale(x, f):
    return x * f


print(jax.jit(scale)(1.0, f=2.0))
