"""The environment every uv (or pip) call of the kit runs with: the caller's, less what decides what is installed.

A release's install is decided by its plan alone (requirements, era cut-off,
indexes, wheel folders, a user's `--pin`), and the plan is what the lock, the
environment's folder and the probe cache are keyed by. uv and pip also read
settings from the environment: ``UV_CONSTRAINT=FILE`` holding ``numpy==1.26.4``
turned jax 0.6.0's numpy 2.2.5 into 1.26.4 (and its Python 3.13 into 3.12),
``UV_RESOLUTION=lowest-direct`` its scipy 1.15.2 into 1.13.0, each written to the
release's lock as its era's answer and reused by every later run. So those are
dropped, and said (`ignored_settings_note`); what says *where* and *how* uv
works (its cache, the network, credentials, where it keeps Pythons) is kept.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

KEPT_UV_SETTINGS = frozenset({
    # where uv keeps its cache and managed Pythons, and how it installs
    "UV_CACHE_DIR", "UV_NO_CACHE", "UV_LINK_MODE", "UV_COMPILE_BYTECODE", "UV_COMPILE_BYTECODE_TIMEOUT",
    "UV_CONCURRENT_DOWNLOADS", "UV_CONCURRENT_BUILDS", "UV_CONCURRENT_INSTALLS", "UV_NO_PROGRESS",
    "UV_PYTHON_INSTALL_DIR", "UV_PYTHON_CACHE_DIR", "UV_PYTHON_BIN_DIR", "UV_PYTHON_DOWNLOADS",
    "UV_PYTHON_INSTALL_MIRROR", "UV_PYPY_INSTALL_MIRROR", "UV_PYTHON_DOWNLOADS_JSON_URL",
    # the network and its credentials
    "UV_OFFLINE", "UV_HTTP_TIMEOUT", "UV_REQUEST_TIMEOUT", "UV_HTTP_RETRIES", "UV_NATIVE_TLS", "UV_SYSTEM_CERTS",
    "UV_INSECURE_HOST", "UV_KEYRING_PROVIDER", "UV_CREDENTIALS_DIR",
})
"""uv's variables about where and how it works, not what it resolves; every other ``UV_*`` is dropped."""
_INDEX_CREDENTIALS = re.compile(r"UV_INDEX_\w+_(?:USERNAME|PASSWORD)")

KEPT_PIP_SETTINGS = frozenset({
    "PIP_CACHE_DIR", "PIP_NO_CACHE_DIR", "PIP_CERT", "PIP_CLIENT_CERT", "PIP_TRUSTED_HOST", "PIP_PROXY",
    "PIP_TIMEOUT", "PIP_DEFAULT_TIMEOUT", "PIP_RETRIES", "PIP_KEYRING_PROVIDER", "PIP_NO_INPUT", "PIP_DISABLE_PIP_VERSION_CHECK",
    "PIP_PROGRESS_BAR",
})
"""The same for pip (the virtualenv backend, where uv is not installed): its cache and the network. The others
are dropped without a word: uv, the kit's installer wherever it is installed, reads none of them, so a machine's
PIP_FIND_LINKS (this one's names /opt/wheels) would otherwise be named at every resolution for nothing."""


def uv_env(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``environ`` as every uv and pip call of the kit gets it."""
    env = {name: value for name, value in environ.items() if not _decides_the_install(name)}
    # Config files are settings too (uv.toml, pip.conf, a machine's /etc/xdg/pip capping a package):
    # the plan alone says where wheels come from.
    env["UV_NO_CONFIG"] = "1"
    env["PIP_CONFIG_FILE"] = os.devnull
    # uv wraps an error's causes at $COLUMNS, which a shell or a test runner may export: a long path is then
    # split over two lines and the words the kit reads (uv_failures, refusals) no longer match. Its output
    # here is a pipe, so without COLUMNS it writes each cause on one line.
    env.pop("COLUMNS", None)
    return env


def ignored_settings(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The caller's ``UV_*`` variables that `uv_env` drops because they would change what is installed, sorted."""
    return sorted(name for name, value in environ.items()
                  if value and name.startswith("UV_") and _decides_the_install(name))


def ignored_settings_note(environ: Mapping[str, str] = os.environ) -> str | None:
    """One sentence naming `ignored_settings`, and where the kit takes such a choice instead; None if none."""
    names = ignored_settings(environ)
    if not names:
        return None
    *others, last = names
    named, verb, pronoun = (f"{', '.join(others)} and {last}", "are", "them") if others else (last, "is", "it")
    return (f"{named} {verb} set here: the kit's uv runs without {pronoun}, so a release installs as its plan says "
            "(where wheels come from: index_url and find_links under [install] in matrix.toml, or -- --find-links; "
            "a version held: --pin)")


def _decides_the_install(name: str) -> bool:
    if name.startswith("UV_"):
        return name not in KEPT_UV_SETTINGS and name != "UV_NO_CONFIG" and not _INDEX_CREDENTIALS.fullmatch(name)
    if name.startswith("PIP_"):
        return name not in KEPT_PIP_SETTINGS
    return False
