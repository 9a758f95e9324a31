"""kit.install.installer_env: what of the caller's environment every uv and pip call of the kit gets."""

from __future__ import annotations

import os

from kit.install.installer_env import ignored_settings, ignored_settings_note, uv_env

CALLER = {
    "HOME": "/home/u", "HTTPS_PROXY": "http://proxy:3128", "UV_CACHE_DIR": "/scratch/uv", "UV_HTTP_RETRIES": "0",
    "UV_OFFLINE": "1", "UV_INDEX_CORP_PASSWORD": "secret", "PIP_CERT": "/etc/corp.pem",
    "UV_CONSTRAINT": "/home/u/constraints.txt", "UV_RESOLUTION": "lowest", "UV_EXTRA_INDEX_URL": "https://corp/simple",
    "UV_CONFIG_FILE": "/home/u/uv.toml", "UV_NO_CONFIG": "0", "PIP_CONSTRAINT": "/home/u/c.txt",
    "PIP_CONFIG_FILE": "/home/u/pip.conf", "COLUMNS": "80",
}


def test_what_decides_the_install_is_dropped_and_where_and_how_uv_works_is_kept() -> None:
    env = uv_env(CALLER)
    assert {name: env[name] for name in ("HOME", "HTTPS_PROXY", "UV_CACHE_DIR", "UV_HTTP_RETRIES", "UV_OFFLINE",
                                         "UV_INDEX_CORP_PASSWORD", "PIP_CERT")} == {
        name: CALLER[name] for name in ("HOME", "HTTPS_PROXY", "UV_CACHE_DIR", "UV_HTTP_RETRIES", "UV_OFFLINE",
                                        "UV_INDEX_CORP_PASSWORD", "PIP_CERT")}
    assert [name for name in ("UV_CONSTRAINT", "UV_RESOLUTION", "UV_EXTRA_INDEX_URL", "UV_CONFIG_FILE",
                              "PIP_CONSTRAINT") if name in env] == []


def test_no_config_file_is_read_whatever_the_caller_says() -> None:
    env = uv_env(CALLER)
    assert env["UV_NO_CONFIG"] == "1"
    assert env["PIP_CONFIG_FILE"] == os.devnull


def test_uv_runs_without_the_callers_terminal_width() -> None:
    # uv wraps its causes at COLUMNS: "failed to create directory\n         `/long/path`:" is not read as a path.
    assert "COLUMNS" not in uv_env(CALLER)


def test_the_settings_left_out_are_named_in_one_sentence() -> None:
    # pip's are dropped too, unnamed: uv reads none of them (kit.install.installer_env.KEPT_PIP_SETTINGS).
    assert ignored_settings(CALLER) == ["UV_CONFIG_FILE", "UV_CONSTRAINT", "UV_EXTRA_INDEX_URL", "UV_RESOLUTION"]
    note = ignored_settings_note({"UV_CONSTRAINT": "/c.txt", "UV_RESOLUTION": "lowest", "UV_CACHE_DIR": "/u"})
    assert note is not None
    assert note.startswith("UV_CONSTRAINT and UV_RESOLUTION are set here: the kit's uv runs without them, ")
    assert ignored_settings_note({"UV_CONSTRAINT": "/c.txt"}).startswith(  # type: ignore[union-attr]
        "UV_CONSTRAINT is set here: the kit's uv runs without it, ")


def test_nothing_is_said_where_nothing_is_left_out() -> None:
    assert ignored_settings_note({"UV_CACHE_DIR": "/u", "UV_CONSTRAINT": "", "PIP_FIND_LINKS": "/opt/wheels"}) is None
