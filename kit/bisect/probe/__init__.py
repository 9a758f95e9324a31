"""One probe of a release: what it runs, how its run is judged, and where finished probes are kept.

* :mod:`.probes`: a ``Prober``, a *subject* (what is probed) judged by a *judge* (what its run counts as);
* :mod:`.release_subject`: a release, its environment resolved and built once per bisect;
* :mod:`.judges`: by a check's verdict or a script's exit code, from the cache, a record or a run;
* :mod:`.cache`: finished probes on disk, keyed by what ran, shared by every bisect;
* :mod:`.output`: a probe's whole output in a log, and the bounded tail the report quotes;
* :mod:`.given`: runs made before the bisect (``triage --run``'s), taken where they answer a probe;
* :mod:`.metric`: ``--metric``, a step in a measured metric judged from repeated samples;
  :mod:`.metric_samples` keeps those samples so an interrupted bisect resumes; :mod:`.metric_summary` is what the
  report says of them;
* :mod:`.cluster`: ``--slurm``, a round's probes as one SLURM job array.

The commit phase (:mod:`kit.bisect.commits`) probes commits through the same ``Prober``.
"""

from .cache import ProbeCache
from .cluster import ClusterProbes, Task, read_task
from .given import GivenProbe, HandedRun, given_by_release
from .judges import release_prober
from .metric import MetricJudge
from .metric_summary import MetricStep, MetricSummary
from .metric_samples import MetricSamples
from .probes import Prober
from .release_subject import ReleaseSubject, resolved_python_and_jaxlib

__all__ = [
    "ClusterProbes", "GivenProbe", "HandedRun", "MetricJudge", "MetricSamples", "MetricStep", "MetricSummary", "ProbeCache", "Prober",
    "ReleaseSubject", "Task", "given_by_release", "read_task", "release_prober", "resolved_python_and_jaxlib",
]
