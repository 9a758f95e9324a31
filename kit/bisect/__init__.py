"""``nox -s bisect``: find the first JAX release where a behaviour changes, then (``--commits``) the commit.

The modules follow a bisect from start to end:

* :mod:`.options`: the command line, and the two ends (given, or from the records);
* :mod:`.run_spec`: what every probe runs, made once from the options (the check, its parameters, the install key);
* :mod:`.gallop`: one end given, the other found (the newest first, then doubling steps);
* :mod:`.candidates`: the releases between them, and what installs each;
* :mod:`.search`: the pure algorithm (no I/O): bisect, verify the ends, scan all;
* :mod:`.outcomes`: what a release did, and the one place it becomes good / bad / skip;
* :mod:`.probes`: one probe, from a current record or a run in the release's environment;
* :mod:`.probe_cache`: finished probes on disk, keyed by what ran, shared by every bisect;
* :mod:`.given_probes`: runs made before the bisect (``triage --run``'s), taken where they answer a probe;
* :mod:`.metric`: a slowdown judged from repeated samples (``--metric``);
* :mod:`.finding`: what the search found and what it cost, for the report;
* :mod:`.report`: the markdown and JSON ready to paste into an issue; :mod:`.summary` its first
  10 lines, :mod:`.report_inputs` what it quotes besides the finding;
* :mod:`.advice`: the tip when the bounds do not hold, following what is already known;
* :mod:`.console`: what a bisect prints without ``-v`` (one line a probe, the phases);
* :mod:`.changelog`: the compare links and release notes the report quotes
  (:mod:`.changelog_entries`: only the entries that name what the script calls);
* ``--commits``, the same search over JAX's commits between the two releases found:
  :mod:`.commit_search` (the phase), :mod:`.commit_candidates` (commits with the jaxlib
  build each runs on), :mod:`.commit_probes` (a commit laid over its build),
  :mod:`.commit_finding` (the verdict, the JSON), :mod:`.commit_report` (the markdown);
* :mod:`.per_op`: ``--explain`` without ``--op``: each op that changed, bisected on its own;
* :mod:`.driver`: ``main``, which runs them in that order.
"""

from .driver import main

__all__ = ["main"]
