"""Binary only, by construction: good once the compiled jaxlib's extension version is past jaxlib 0.10.2's (467).

    nox -s bisect -- --script examples/binary_version_0_11.py --good 0.11.0 --bad 0.10.2 --commits --jax-repo DIR

No commit's Python changes what this reads, so the commit search must end in "not in JAX's Python",
and with both probe pairs: the same Python (the range's newest commit on jaxlib 0.10.2) bad there and
good on jaxlib 0.11.0, and the range's old end's Python good on 0.11.0 too (forced past JAX's
version check, since that commit's jax/version.py refuses a jaxlib newer than 0.10.x). With the
overlay before format 4 the commits laid their own `xla_client._version` over the build, and this
script would have read the commit's number instead of the binary's.
"""

import sys

from jaxlib import xla_client

print(f"xla_client._version = {xla_client._version}")
sys.exit(0 if xla_client._version > 467 else 1)
