"""One rank of a program the kit launched: let ``jax.distributed.initialize()`` with no arguments find its place.

No JAX release reads the number of processes or its own process id from a
variable of its own: with no arguments, ``initialize`` takes only the
coordinator from ``JAX_COORDINATOR_ADDRESS`` and asks the cluster it runs in
for the rest (SLURM's variables, Open MPI's, Kubernetes', a Cloud TPU's),
through the subclasses of ``jax._src.clusters.ClusterEnv``, "automatically
detected when imported" (its docstring; so from jax 0.4.13 to the newest).
The kit's launchers (`kit.launch`) put ``JAX_COORDINATOR_ADDRESS``,
``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` in each rank's environment,
and `install` adds one such subclass, first in the list, that reads them: a
program run by the kit joins its partners the way it joins them on its
cluster. Under ``srun`` the kit sets none of them and JAX's own SLURM
detection answers (the kit's cluster, asked first, says it is not present).

CPU clients run collectives across processes only with gloo: the default
from jax 0.5.1, an option before that (``jax_cpu_collectives_implementation``
from ~0.4.30, ``jax_cpu_enable_gloo_collectives`` ~0.4.22-0.4.29), nothing
earlier. When ``initialize`` asks for the cluster, the option the release
has is set to gloo unless the program chose one itself, and what was done
is written into the program's facts (`repro.program_watch`): a release with
neither option is said, not guessed.

Stdlib only at import: it is armed by the explain site's ``sitecustomize``
before the program starts, and acts only once the program imports JAX.
"""

from __future__ import annotations

import importlib.abc
import os
import sys
from typing import Any, Dict, Optional

COORDINATOR_ENV = "JAX_COORDINATOR_ADDRESS"
PROCESSES_ENV = "JAX_NUM_PROCESSES"
PROCESS_ID_ENV = "JAX_PROCESS_ID"
LAUNCHER_ENV = "KIT_LAUNCHER"
"""Set by every launcher of the kit (srun's ranks too, whose place SLURM's variables give)."""
RANK_PLACEHOLDER = "{rank}"
"""In the kit's dump flags and facts path: replaced by this process's rank (one folder per rank)."""
_CLUSTERS = "jax._src.clusters"
_RANK_SOURCES = (PROCESS_ID_ENV, "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
facts: Dict[str, Any] = {}


def rank() -> Optional[int]:
    """This process's rank as its launcher set it (the kit's, srun's, mpirun's); None where none did."""
    for name in _RANK_SOURCES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def per_rank(text: str) -> str:
    """``text`` with ``{rank}`` replaced by this process's rank (0 where no launcher set one)."""
    return text.replace(RANK_PLACEHOLDER, str(rank() or 0))


def launched_by_kit() -> bool:
    return all(os.environ.get(name) for name in (COORDINATOR_ENV, PROCESSES_ENV, PROCESS_ID_ENV))


def install() -> None:
    """Put the kit's cluster first once the program imports JAX (nothing is imported here)."""
    if not (launched_by_kit() or os.environ.get(LAUNCHER_ENV)):
        return
    sys.meta_path.insert(0, _AfterImport())


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds ``jax._src.clusters`` with the finders after it and runs `_register` once the module has run."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != _CLUSTERS:
            return None
        sys.meta_path.remove(self)  # once: the rest of JAX imports as it always does
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                run = spec.loader.exec_module

                def exec_module(module: Any) -> None:
                    run(module)
                    _register(module)

                spec.loader.exec_module = exec_module
                return spec
        return None


def _register(clusters: Any) -> None:
    base = getattr(clusters, "ClusterEnv", None)
    if base is None or not isinstance(getattr(base, "_cluster_types", None), list):
        facts["cluster"] = "this release has no ClusterEnv list: the program must pass its own arguments"
        return

    class KitLaunch(base):  # type: ignore[misc, valid-type]
        """The rank the kit's launcher started (kit.launch): the coordinator, the count and the id it set."""

        name = "kit"
        opt_in_only_method = False

        @classmethod
        def is_env_present(cls) -> bool:
            # Asked first as initialize() looks for its cluster: gloo is set then, under srun too (where SLURM's
            # cluster, asked next, gives the place).
            _enable_cpu_collectives()
            facts["cluster"] = "kit" if launched_by_kit() else "the cluster's own (srun: SLURM's variables)"
            return launched_by_kit()

        @classmethod
        def get_coordinator_address(cls, *args: Any, **kwargs: Any) -> str:
            return os.environ[COORDINATOR_ENV]

        @classmethod
        def get_process_count(cls) -> int:
            return int(os.environ[PROCESSES_ENV])

        @classmethod
        def get_process_id(cls) -> int:
            return int(os.environ[PROCESS_ID_ENV])

        @classmethod
        def get_local_process_id(cls) -> Optional[int]:
            return None  # every device of this process stays visible to it

    kinds = base._cluster_types
    if KitLaunch in kinds:
        kinds.remove(KitLaunch)
    kinds.insert(0, KitLaunch)  # before SLURM's: a kit run inside an allocation is still the kit's N processes


def _enable_cpu_collectives() -> None:
    """gloo for CPU collectives across processes, by the option this release has (the program's choice kept)."""
    jax = sys.modules.get("jax")
    config = getattr(jax, "config", None)
    if config is None or facts.get("cpu_collectives"):
        return  # JAX not far enough along to have its options: nothing to set, and never a failure of the program
    for option, wanted, unset in (("jax_cpu_collectives_implementation", "gloo", (None, "none", "")),
                                  ("jax_cpu_enable_gloo_collectives", True, (False, None))):
        try:
            value = _read(config, option)
        except (AttributeError, KeyError, LookupError):
            continue  # not an option of this release: try the older spelling
        if value in unset:
            try:
                config.update(option, wanted)
            except Exception as error:  # the release refuses it: say so, the run goes on
                facts["cpu_collectives"] = f"{option}={wanted} refused ({type(error).__name__}: {error})"[:300]
                return
            facts["cpu_collectives"] = f"{option}={wanted} (set by the kit)"
        else:
            facts["cpu_collectives"] = f"{option}={value}"
        return
    facts["cpu_collectives"] = "none"  # neither option: this release's CPU client has no cross-process collectives


def _read(config: Any, option: str) -> Any:
    holders = getattr(config, "_value_holders", None)
    if isinstance(holders, dict):
        return holders[option].value
    values = getattr(config, "values", None)
    if isinstance(values, dict):
        return values[option]
    return getattr(config, option)
