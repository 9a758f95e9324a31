"""Real messages the tests of triage's error matching share (kit/triage/failure_pattern.py, block_outcome.py)."""

# One failure, as four real releases print it (`jax.jit(lambda x, n: x * jnp.zeros(n))(1.0, 3)`, run on each release's
# environment on 2026-12-06): the tracer's repr changed three times.
ONE_FAILURE_FOUR_REPRS = {
    "0.4.36": "Shapes must be 1D sequences of concrete values of integer type, got "
              "(Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>,).",
    "0.6.2": "Shapes must be 1D sequences of concrete values of integer type, got (Traced<~int32[]>with<DynamicJaxprTrace>,).",
    "0.7.0": "Shapes must be 1D sequences of concrete values of integer type, got (JitTracer<~int32[]>,).",
    "0.9.2": "Shapes must be 1D sequences of concrete values of integer type, got (JitTracer(~int32[]),).",
}
