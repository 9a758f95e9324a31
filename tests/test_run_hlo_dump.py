"""kit.run.hlo_dump: the dump folder kept to the HLO texts read, bounded on disk; the flags that ask for it."""

from __future__ import annotations

from pathlib import Path

from kit.run.hlo_dump import Dump, dump_flags


def _write(folder: Path, name: str, size: int) -> None:
    (folder / name).write_bytes(b"x" * size)


def test_only_the_hlo_texts_are_kept_and_modules_pair_their_two_stages(tmp_path: Path) -> None:
    with Dump(tmp_path / "dump") as dump:
        folder = dump.folder
        _write(folder, "module_0001.jit_f.before_optimizations.txt", 10)
        _write(folder, "module_0001.jit_f.cpu_after_optimizations.txt", 10)
        _write(folder, "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt", 10)
        _write(folder, "module_0001.jit_f.obj-file.part_00.o", 10)
        _write(folder, "module_0002.jit_g.sm_9.0_gpu_after_optimizations.txt", 10)
        (folder / "module_0000.jit_stage").mkdir()
    assert sorted(p.name for p in folder.iterdir()) == ["module_0001.jit_f.before_optimizations.txt",
                                                        "module_0001.jit_f.cpu_after_optimizations.txt",
                                                        "module_0002.jit_g.sm_9.0_gpu_after_optimizations.txt"]
    modules = dump.modules()
    assert [(m.number, m.name, m.before is not None) for m in modules] == [(1, "jit_f", True), (2, "jit_g", False)]


def test_texts_past_the_limit_are_deleted_and_named_so_the_disk_stays_bounded(tmp_path: Path) -> None:
    with Dump(tmp_path / "dump", limit_bytes=25) as dump:
        for number in range(1, 5):
            _write(dump.folder, f"module_000{number}.jit_f.cpu_after_optimizations.txt", 10)
    assert dump.kept_bytes == 20
    assert len(dump.dropped) == 2
    assert sum(p.stat().st_size for p in dump.folder.iterdir()) <= 25


def test_the_dump_flags_keep_the_users_flags_and_replace_an_earlier_dump() -> None:
    flags = dump_flags(Path("/k/dump"), "--xla_cpu_use_thunk_runtime=false --xla_dump_to=/elsewhere")
    assert flags == "--xla_cpu_use_thunk_runtime=false --xla_dump_to=/k/dump --xla_dump_hlo_as_text"
