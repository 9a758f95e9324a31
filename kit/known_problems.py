"""Known upstream problems: the only upstream facts the report states.

Each entry names a JAX bug a check looks for, where it shows, and the change
that fixed it upstream, so matrix.md can put the release range the records
measured next to the release the fix went into. These are citations, never
verdicts: every verdict in the report comes from a record.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class UpstreamChange:
    """A change in JAX that fixed a problem, as cited in the report."""

    release: str
    title: str
    url: str
    commit: str
    verified: str
    related: tuple[str, ...] = ()


PARTITIONABLE_LINALG_CHANGE = UpstreamChange(
    release="0.5.3",
    title=(
        "Add and test support for partitioning of batch dimensions in lax.linalg "
        "(Dan Foreman-Mackey, 2025-02-27)"
    ),
    url="https://github.com/jax-ml/jax/commit/f93c2a1aa51d0d124bf0632eacbe95c261dacd57",
    commit="f93c2a1aa51d0d124bf0632eacbe95c261dacd57",
    verified=(
        "git history of jax-ml/jax: the commit is an ancestor of tag jax-v0.5.3 and not of "
        "jax-v0.5.2; it marks the LAPACK/cuSOLVER FFI custom calls batch-partitionable and adds "
        "tests/linalg_sharding_test.py. Not mentioned in CHANGELOG.md."
    ),
    related=(
        "https://github.com/jax-ml/jax/commit/c521bc62052e0ae760da2cffc376c6bf2c6f51f0 "
        "(XLA client mechanism for batch-partitionable FFI calls, first in 0.5.1)",
        "https://github.com/jax-ml/jax/commit/21884d4a14d364c3b82b312a668079c668cc2836 "
        "(registers the linalg custom calls through jax.ffi so GPU plugins get the "
        "partitioner too, first in 0.5.3)",
    ),
)

ISSUE_24843_FIX = UpstreamChange(
    release="0.4.36",
    title="Fix overflow error in GPU batched linear algebra kernels (2024-11-12)",
    url="https://github.com/jax-ml/jax/commit/21e98b5ce43dd1fda5d10fb7441bfdd011811095",
    commit="21e98b5ce43dd1fda5d10fb7441bfdd011811095",
    verified="CHANGELOG.md of jax-v0.4.36, 'Bug fixes', cites #24843.",
)


@dataclass(frozen=True)
class KnownProblem:
    key: str
    check: str
    title: str
    links: tuple[str, ...]
    fix: UpstreamChange
    # Where the bug shows; a clean result on another backend does not clear a release.
    shows_on: tuple[str, ...] = ("cpu", "gpu")


KNOWN_PROBLEMS: tuple[KnownProblem, ...] = (
    KnownProblem(
        key="sharded-slogdet-all-gather",
        check="scaling",
        title=(
            "Sharded slogdet does not scale: the batch is all-gathered before the LU "
            "custom call (linalg custom calls not batch-partitionable)"
        ),
        links=(PARTITIONABLE_LINALG_CHANGE.url,),
        fix=PARTITIONABLE_LINALG_CHANGE,
    ),
    KnownProblem(
        key="jax-24843",
        check="correctness",
        title="Wrong det/slogdet for large batches on GPU (JAX issue #24843)",
        links=("https://github.com/jax-ml/jax/issues/24843", ISSUE_24843_FIX.url),
        fix=ISSUE_24843_FIX,
        shows_on=("gpu",),
    ),
)
