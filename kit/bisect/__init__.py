"""``nox -s bisect``: find the first JAX release where a behaviour changes, then (``--commits``) the commit.

The modules here are the search and the flow around it, in the order a bisect runs them:

* :mod:`.options`: the command line, and the two ends (given, or from the records);
* :mod:`.specs`: the command line split for the modules below the driver: what runs, how to search, what to report;
* :mod:`.bounds`: good and bad as one value, made once, with where they came from;
* :mod:`.run_spec`: what every probe runs, made once from what runs (the check, its parameters, the install key);
* :mod:`.gallop`: one end given, the other found (the newest first, then doubling steps);
* :mod:`.candidates`: the releases between them, and what installs each;
* :mod:`.ahead`: the candidates the search will likely reach, resolved ahead;
* :mod:`.search`: the pure algorithm (no I/O): bisect, verify the ends, scan all;
* :mod:`.rounds`: K probes at once;
* :mod:`.observation`: what a release did, in four parts (found, came from, cost, installed);
* :mod:`.outcomes`: the one place an observation becomes good / bad / skip, and its words;
* :mod:`.console`: what a bisect prints without ``-v`` (one line a probe, the phases);
* :mod:`.commit_search`: the ``--commits`` phase, over :mod:`.commits`;
* :mod:`.per_op`: ``--explain`` without ``--op``: each op that changed, bisected on its own;
* :mod:`.driver`: ``main``, which runs them in that order.

Three sub-packages, each used only through the names in its ``__all__`` (tests/test_layers.py):
:mod:`.probe` (one probe: its subject, its judge, the probe cache, metrics, SLURM), :mod:`.commits` (the
commit candidates, builds, probes, pairs and finding) and :mod:`.report` (the finding written down).
"""

from .driver import main, run_task

__all__ = ["main", "run_task"]
