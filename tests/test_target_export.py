"""`repro.target_export` inside a program: every jitted computation it calls is counted and exported once.

A stand-in ``jax`` (jit, tree_util, export) is enough: what is under test is how computations are told apart.
Issue 58: ``jax.jit(jax.value_and_grad(f))`` built for each of a dict of functions, each object freed after its
call; keyed by ``id()``, the next object got a freed one's id and was taken for it (inv never examined on A100
0.12.0.1, slogdet on 0.5.3).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent


class _Array:
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.dtype = shape, "float32"


class _Jitted:
    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun, self.__name__ = fun, getattr(fun, "__name__", "f")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fun(*args, **kwargs)


class _Exported:
    def __init__(self, jitted: _Jitted, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> None:
        self.fun_name, self.in_avals, self.jitted = jitted.__name__, [a for a in args], jitted
        self.statics = sorted((kwargs or {}).items())  # a static keyword's value makes another module

    def serialize(self) -> bytes:
        # What the function computes, as a module's bytes would say it: the code and the constants it closes over.
        fun = getattr(self.jitted.fun, "inner", self.jitted.fun)
        cells = [c.cell_contents for c in (fun.__closure__ or ())]
        return repr((fun.__code__.co_code, fun.__code__.co_consts, cells, self.statics)).encode()


def _fake_jax() -> types.ModuleType:
    jax = types.ModuleType("jax")
    jax.jit = lambda fun, **kwargs: _Jitted(fun)  # type: ignore[attr-defined]
    tree = types.ModuleType("jax.tree_util")
    tree.tree_leaves = lambda tree: list(tree)  # type: ignore[attr-defined]
    tree.tree_structure = lambda tree: f"PyTreeDef({len(tree)})"  # type: ignore[attr-defined]
    jax.tree_util = tree  # type: ignore[attr-defined]
    jax.core = types.SimpleNamespace(Tracer=type("Tracer", (), {}))  # type: ignore[attr-defined]
    export = types.ModuleType("jax.export")
    export.export = lambda jitted, platforms: (  # type: ignore[attr-defined]
        lambda *args, **kwargs: _Exported(jitted, args, kwargs))
    jax.export = export  # type: ignore[attr-defined]
    return jax


def _value_and_grad(fun: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any) -> Any:  # a new object each call, as jax.value_and_grad makes
        return fun(*args), 0.0

    wrapped.__name__ = getattr(fun, "__name__", "f")
    wrapped.inner = fun  # type: ignore[attr-defined]
    return wrapped


@pytest.fixture
def exporting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    """A fresh `repro.target_export` (its state is per process) patched into a fresh stand-in jax."""
    jax = _fake_jax()
    for name, module in (("jax", jax), ("jax.export", jax.export), ("jax.tree_util", jax.tree_util)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setenv("KIT_TARGET_EXPORTS", str(tmp_path))
    monkeypatch.setenv("KIT_TARGET_PLATFORM", "cuda")
    spec = importlib.util.spec_from_file_location("fresh_target_export", ROOT / "repro" / "target_export.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module._patch(jax)
    yield module, jax


def test_a_dict_of_functions_jitted_in_a_loop_counts_every_one(exporting: tuple[Any, Any], tmp_path: Path) -> None:
    module, jax = exporting
    x = _Array((256, 8, 8))
    losses = {name: (lambda n: (lambda m: n))(name) for name in ("slogdet", "inv", "solve", "qr", "cholesky", "eigh")}
    for loss in losses.values():
        jax.jit(_value_and_grad(loss))(x)  # the jitted object is freed after its call: its id comes free
    entries = module.manifest(str(tmp_path))
    assert len([e for e in entries if "file" in e]) == 6, entries
    assert module.counts(entries)["called"] == 6 and module.counts(entries)["exported"] == 6
    assert len(list(tmp_path.glob("*.bin"))) == 6


def test_the_same_computation_jitted_again_is_counted_and_compiled_once(exporting: tuple[Any, Any],
                                                                       tmp_path: Path) -> None:
    module, jax = exporting
    x = _Array((256, 8, 8))

    def loss(m: Any) -> int:
        return 1

    for _ in range(3):  # a training loop that rebuilds its jit each step
        jax.jit(_value_and_grad(loss))(x)
    jitted = jax.jit(loss)
    jitted(x)
    jitted(x)  # the same object and signature: not a new computation
    counted = module.counts(module.manifest(str(tmp_path)))
    assert (counted["called"], counted["exported"], counted["same"]) == (4, 1, 3), counted


def test_past_the_bound_computations_are_counted_not_exported(exporting: tuple[Any, Any], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    module, jax = exporting
    monkeypatch.setattr(module, "MAX_EXPORTS", 2)
    for number in range(5):
        jax.jit(_value_and_grad((lambda n: (lambda m: n))(number)))(_Array((4, 2, 2)))
    counted = module.counts(module.manifest(str(tmp_path)))
    assert (counted["called"], counted["exported"], counted["over_limit"]) == (5, 2, 3), counted


def test_the_wrapper_is_excluded_from_the_frames_jax_names_ops_by(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # A jit JAX applies inside itself (jax.scipy's jit(_solve_triangular)) is built with the wrapped jax.jit and
    # called from the wrapper: without the exclusion JAX named its ops "target_export.py:117" (issue 58's trial;
    # tests/test_hlo_combined_sums.py has that module). jax 0.4.13 on has `register_exclusion`.
    jax = _fake_jax()
    excluded: list[str] = []
    source_info = types.ModuleType("jax._src.source_info_util")
    source_info.register_exclusion = excluded.append  # type: ignore[attr-defined]
    internal = types.ModuleType("jax._src")
    internal.source_info_util = source_info  # type: ignore[attr-defined]
    for name, module in (("jax", jax), ("jax._src", internal), ("jax._src.source_info_util", source_info)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setenv("KIT_TARGET_EXPORTS", str(tmp_path))
    spec = importlib.util.spec_from_file_location("fresh_target_export", ROOT / "repro" / "target_export.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module._patch(jax)
    assert excluded == [str((ROOT / "repro" / "target_export.py").resolve())]


def test_a_static_keyword_makes_a_computation_of_its_own(exporting: tuple[Any, Any], tmp_path: Path) -> None:
    # t7: `conditioning(x, ridge=1e-3)` after `ridge=1e-1` (static_argnames) was "already seen": one computation
    # never examined, and a function called with method="cholesky" then "eigh" answered "every op split" from the
    # cholesky alone.
    module, jax = exporting
    x = _Array((256, 6, 6))

    def spectrum_bound(gram: Any, method: str) -> str:
        return method

    jitted = jax.jit(spectrum_bound, static_argnames=("method",))
    jitted(x, method="cholesky")
    jitted(x, method="eigh")
    jitted(x, method="eigh")  # the same again: not a new computation
    counted = module.counts(module.manifest(str(tmp_path)))
    assert (counted["called"], counted["exported"]) == (2, 2), counted


def test_statics_are_read_by_name_and_by_position_from_the_signature(exporting: tuple[Any, Any]) -> None:
    module, _jax = exporting

    def f(x: Any, ridge: float, *, scale: float = 1.0) -> None:
        pass

    assert module._statics(f, (), ("ridge",)) == ((1,), ("ridge",))
    assert module._statics(f, (1,), ()) == ((1,), ("ridge",))
    assert module._statics(f, (), ("scale",)) == ((), ("scale",))  # keyword-only: by name alone
