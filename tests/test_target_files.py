"""``--target ./mychip.toml``: a user's own TPU slice or GPU description, checked where it enters.

Each mistake in the file is one sentence naming it (exit 2, no traceback), and a good file is accepted by
every command that takes ``--target``: check sessions, matrix, bisect and explain.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kit import cli, commands, exit_codes
from kit.config import parse_matrix
from kit.errors import ConfigError, KitError
from kit.targets import Target, parse_target
from repro import target_devices

ROOT = Path(__file__).resolve().parent.parent
TPU_FILE = 'platform = "tpu"\nchip = "v5e"\ntopology = "v5e:4x4"\nchips_per_host_bounds = [2, 2, 1]\n'


def _file(folder: Path, text: str, name: str = "mychip.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tpu_slice_of_ones_own_is_a_target_like_the_named_ones(tmp_path: Path, monkeypatch) -> None:
    _file(tmp_path, TPU_FILE)
    monkeypatch.chdir(tmp_path)
    target = parse_target("./mychip.toml")
    assert (target.name, target.platform, target.topology, target.host_bounds, target.devices) == (
        "mychip.toml", "tpu", "v5e:4x4", "2,2,1", 16)  # 16 chips, as the topology says
    assert target.compiled_not_run == "compiled for TPU v5e 4x4 (16 devices), not run"
    assert target.install_extra == "tpu" and not target.compiles_on("0.5.0")
    assert "description_text" not in target.to_json()
    assert Target.from_json(target.to_json()) == target
    named = parse_target("tpu:v5e:2x2")
    assert named.to_json() == {**named.to_json()}  # a named target's JSON is as before: its records stay current
    assert "description_text" not in named.to_json()


def test_a_gpu_of_ones_own_carries_its_description_to_the_compile(tmp_path: Path) -> None:
    shutil.copy(ROOT / "repro" / "targets" / "a100.txtpb", tmp_path / "rtx.txtpb")
    path = _file(tmp_path, 'platform = "gpu"\ndescription = "rtx.txtpb"\ndevices = 2\nchip = "rtx6000"\n')
    target = parse_target(str(path))
    assert (target.platform, target.topology, target.title) == ("cuda", "1x2x1", "2 RTX6000 GPUs")
    carried = Target.from_json(json.loads(json.dumps(target.to_json())))
    assert carried == target
    # The repro reads the user's description from the target itself: records hold what was compiled for.
    assert target_devices.description_text(target.to_json()) == (tmp_path / "rtx.txtpb").read_text()
    model = parse_target(str(_file(tmp_path, 'platform = "gpu"\nmodel = "h100"\ndevices = 8\n', "h.toml")))
    assert (model.title, model.description, model.description_text) == ("8 NVIDIA H100 GPUs", "h100.txtpb", "")


@pytest.mark.parametrize("text, said", [
    ('platform = "npu"\n', "platform must be \"tpu\" or \"gpu\", not 'npu'"),
    (TPU_FILE + "chip_kind = 1\n", "unknown key 'chip_kind' in mychip.toml"),
    (TPU_FILE.replace('"v5e"\n', '"V5 E"\n', 1), "chip must be a TPU kind such as \"v5e\", not 'V5 E'"),
    (TPU_FILE.replace('"v5e:4x4"', '"4x4"'), "topology must be a name such as \"v5e:2x2\""),
    (TPU_FILE.replace('"v5e:4x4"', '"v4:2x2x1"'), "topology 'v4:2x2x1' is for a v4 chip, and chip is 'v5e'"),
    (TPU_FILE.replace('"v5e:4x4"', '"v5e:0x2"'), "topology 'v5e:0x2' has an axis of no chips"),
    (TPU_FILE.replace("[2, 2, 1]", "[2, 2]"), "chips_per_host_bounds must be three whole numbers of 1 or more"),
    (TPU_FILE.replace("[2, 2, 1]", "[4, 8, 1]"), "chips_per_host_bounds [4, 8, 1] holds more chips than"),
    (TPU_FILE + "devices = 0\n", "devices must be a whole number from 1 to 4096, not 0"),
    ('platform = "gpu"\ndevices = 4\n', "a GPU target needs either model or description, and one only"),
    ('platform = "gpu"\nmodel = "a100"\ndescription = "x.txtpb"\ndevices = 4\n', "needs either model or description"),
    ('platform = "gpu"\nmodel = "a100"\n', "a GPU target needs devices, how many GPUs"),
    ('platform = "gpu"\nmodel = "a100"\ndevices = 9\n', "devices must be a whole number from 1 to 8, not 9"),
    ('platform = "gpu"\nmodel = "v100"\ndevices = 4\n', "model 'v100' is no GPU the kit has a description of"),
    ('platform = "gpu"\ndescription = "gone.txtpb"\ndevices = 4\n', "description gone.txtpb does not exist"),
    ('platform = "gpu"\ndescription = "empty.txtpb"\ndevices = 4\n', "has no gpu_device_info block"),
    ("platform = \n", "is not valid TOML"),
])
def test_each_mistake_in_a_target_file_is_one_sentence_naming_it(tmp_path: Path, monkeypatch, text: str,
                                                                  said: str) -> None:
    (tmp_path / "empty.txtpb").write_text("# nothing\n")
    _file(tmp_path, text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as raised:
        parse_target("mychip.toml")
    assert said in raised.value.message and raised.value.tip
    assert raised.value.exit_code == exit_codes.EXIT_USAGE


def test_a_missing_target_file_says_where_it_was_looked_for_and_exits_2(tmp_path: Path, capsys) -> None:
    matrix = tmp_path / "matrix.toml"
    matrix.write_text('[[release]]\nversion = "0.12.0.1"\n[checks.scaling]\n', encoding="utf-8")
    code = cli.main(["run", "scaling", "0.12.0.1", "--target", "./nowhere.toml"], log=lambda m: None,
                    matrix_path=str(matrix))
    assert code == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err
    assert "ERROR: --target ./nowhere.toml does not exist (a relative path, read from the current folder" in err
    assert "Traceback" not in err


def test_every_command_taking_target_takes_a_file(tmp_path: Path, monkeypatch) -> None:
    from kit.bisect.options import parse_options as bisect_options
    from kit.explain import options as explain_options
    from kit.matrix import sweep

    _file(tmp_path, TPU_FILE)
    (tmp_path / "p.py").write_text("pass\n")
    monkeypatch.chdir(tmp_path)
    matrix = parse_matrix({"kit": {"targets": ["mychip.toml"]}, "release": [{"version": "0.6.0"}],
                           "checks": {"scaling": {}}}, tmp_path / "matrix.toml")
    mine = parse_target("mychip.toml")
    assert matrix.targets == (mine,)  # [kit] targets, read from matrix.toml's folder
    assert sweep.parse_options(matrix, ["--target", "mychip.toml"]).targets == (mine,)
    overrides: dict = {"target": "mychip.toml"}
    assert commands.target_from_flags("scaling", overrides, None) == mine and mine.topology == "v5e:4x4"
    assert Target.from_json(json.loads(mine.as_parameter)) == mine  # the text a record holds reads back as itself
    bisect = bisect_options(matrix, ["--check", "scaling", "--target", "mychip.toml", "--good", "0.5.3", "--bad", "0.6.0"])
    assert bisect.target == mine
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # explain reads it from the folder it was called from, as the program
    explained = explain_options.parse(matrix, ["p.py", "--target", "mychip.toml"], cwd=tmp_path)
    assert explained.target == mine and explained.devices == 16


def test_a_bad_target_file_in_matrix_toml_is_a_config_error(tmp_path: Path) -> None:
    _file(tmp_path, 'platform = "tpu"\n')
    with pytest.raises(KitError, match="kit.targets in matrix.toml: mychip.toml: chip must be a TPU kind such as \"v5e\", and it is missing"):
        parse_matrix({"kit": {"targets": ["mychip.toml"]}, "release": [{"version": "0.6.0"}],
                      "checks": {"scaling": {}}}, tmp_path / "matrix.toml")


def test_an_invented_slice_is_compiled_with_a_caution(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    _file(tmp_path, TPU_FILE.replace('"v5e:4x4"', '"v5e:3x3"'))
    target = parse_target("./mychip.toml")
    assert (target.topology, target.devices) == ("v5e:3x3", 9)  # libtpu compiles for it: taken
    assert capsys.readouterr().err.strip() == (
        "kit: ./mychip.toml: caution: topology v5e:3x3 is not the shape of any TPU slice (slices have a power of two "
        "chips along each axis, e.g. v5e:2x2 or v5e:4x4): libtpu compiles for it all the same, so what is said is "
        "for a slice no machine has")  # was: nothing said
    _file(tmp_path, TPU_FILE)
    parse_target("./mychip.toml")
    assert capsys.readouterr().err == ""  # v5e:4x4 is a slice
