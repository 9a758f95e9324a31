"""How does this run get its Python? One entry point (`prepare`); for a release: the index, the
install plan, what the metadata predicts, the built environment and its lock.

Used from outside only through the names below (tests/test_layers.py):

* `environment`: `prepare` (a release's environment, built or reused, or why not), `Prepared`,
  `Environment`, `ExistingPython` (a user's own interpreter), `over_release`, `install_facts`;
* `key`: `InstallKey`, everything an environment is built from, made once;
* `plan`: `InstallPlan`, what is asked of the resolver, and the hints for a package it cannot supply;
* `index`: `PackageIndex`, the releases and wheels the index offers; `versions_between`;
* `prediction`: `predict`, whether a release installs here, from metadata alone;
* `prefetch`: `Prefetch`, the releases a search will likely reach, resolved ahead;
* `release`: a release resolved (`resolve_release`, `ResolvedRelease`), its lock (`locked_release`),
  its built environment (`built_env`), the index opened once (`open_index`);
* `overlay`: a commit's Python laid over a release's build (`commit_version`, the overlay folders);
* `bytecode`: an environment's bytecode compiled once and kept beside it;
* `envs`: `find_interpreter`, a Python of a given version on this machine;
* `installer_env`: the environment every uv and pip call gets, and `ignored_settings_note`, the
  caller's installer settings it leaves out (they would change what a release installs).

The rest (lockfile, resolutions, pages, wheel_metadata, uv_cache, uv_failures, refusals, installed,
existing, bytecode_child) serves these.
"""

from .bytecode import (bytecode_kept_under, compile_environment, drop_damaged_bytecode, fill_bytecode,
                       release_bytecode_env)
from .environment import Environment, ExistingPython, Prepared, install_facts, over_release, prepare
from .envs import find_interpreter
from .existing import Interpreter, inspect_interpreter
from .index import PackageIndex, versions_between
from .installer_env import ignored_settings_note
from .key import InstallKey
from .overlay import JAX_ALONE, LAID_FORMS, OVERLAY_FORMAT, WITH_JAXLIB, commit_version, new_overlay_folder, remove_overlay
from .plan import InstallPlan, how_to_supply, how_to_supply_extra, unsatisfied_extra
from .prediction import predict
from .prefetch import Prefetch
from .release import ResolvedRelease, built_env, locked_release, open_index, resolve_release

__all__ = [
    "Environment", "ExistingPython", "InstallKey", "Interpreter", "InstallPlan", "JAX_ALONE", "LAID_FORMS", "OVERLAY_FORMAT", "WITH_JAXLIB", "PackageIndex", "Prefetch",
    "Prepared", "ResolvedRelease", "built_env", "bytecode_kept_under", "commit_version", "compile_environment", "drop_damaged_bytecode",
    "fill_bytecode", "find_interpreter", "how_to_supply", "how_to_supply_extra", "ignored_settings_note",
    "inspect_interpreter", "install_facts", "locked_release", "new_overlay_folder", "open_index", "over_release", "predict", "prepare", "release_bytecode_env",
    "remove_overlay", "resolve_release", "unsatisfied_extra", "versions_between",
]
