"""What, besides the release, decides how a release installs here: one value from the command line down to the lock.

A check session, the matrix, bisect and ``nox -s plan`` each ask "how does
jax X install here?" with the same few settings: the backend, extra
``--find-links``, packages held with ``--pin``, a check's extra packages
(``requires``) and the Python to try first. Passed one by one, a caller that
forgot one asked about another environment (``built_env`` once dropped the
pins and read the lock of the environment without them). As one value,
made once where the settings enter, nothing on the way to the plan, the
lock and the environment's folder can drop one.

Package names are in `packaging.utils.canonicalize_name`'s form
(``ML_Dtypes`` -> ``ml-dtypes``), the one spelling the kit compares names in.
"""

from __future__ import annotations

from dataclasses import dataclass
from packaging.utils import canonicalize_name

from ..json_types import JsonObject
from ..targets import INSTALLED_FOR
from ..errors import UsageError


@dataclass(frozen=True)
class InstallKey:
    """The install settings of a run, each in its normal form (see the module's docstring)."""

    backend: str = "cpu"
    find_links: tuple[str, ...] = ()
    """Extra ``--find-links`` (folders or pages), beside matrix.toml's."""
    pins: tuple[str, ...] = ()
    """``NAME==VERSION`` held fixed (``--pin``), names canonical, sorted by name."""
    requires: tuple[str, ...] = ()
    """The check's extra packages, in `kit.requirements`' normal form."""
    python: str | None = None
    """The Python to try first (bisect knows it from the index's metadata). A preference, not a setting: the
    lock names the Python that was chosen, so it is not part of `settings`."""

    def __post_init__(self) -> None:
        if self.backend not in INSTALLED_FOR:
            raise UsageError(f"unknown backend {self.backend!r}", "use --backend cpu, cuda or tpu")
        object.__setattr__(self, "find_links", tuple(self.find_links))
        object.__setattr__(self, "pins", normal_pins(self.pins))
        object.__setattr__(self, "requires", tuple(sorted(set(self.requires))))

    def settings(self) -> JsonObject:
        """This key's part of the lock's settings (`kit.install.lockfile.install_settings`).

        Without pins or extra packages the settings are exactly what they were
        before either existed, so those locks still answer.
        """
        settings: JsonObject = {"backend": self.backend, "extra_find_links": list(self.find_links)}
        if self.pins:
            settings["pins"] = list(self.pins)
        if self.requires:
            settings["requires"] = list(self.requires)
        return settings


def normal_pin(text: str) -> str:
    """``ML_Dtypes==0.5.1`` -> ``ml-dtypes==0.5.1``: a pin's name in its canonical form (already checked as a pin)."""
    name, separator, version = text.partition("==")
    return f"{canonicalize_name(name)}{separator}{version.strip()}"


def normal_pins(pins: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Each pin in its normal form, sorted: the one spelling of a pin set."""
    return tuple(sorted({normal_pin(pin) for pin in pins}))


def pinned_name(pin: str) -> str:
    """The package a pin holds (``ml-dtypes==0.5.1`` -> ``ml-dtypes``)."""
    return str(canonicalize_name(pin.split("==", 1)[0]))
