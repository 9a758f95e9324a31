"""Inside a user's program run for a target: export each jitted computation it calls, for the target's platform.

The program runs unmodified on CPU host devices (it needs real devices to
run); this module, loaded at interpreter start by ``repro/target_site/
sitecustomize.py`` where the kit asks for a target, wraps ``jax.jit`` as jax
is imported. The first call of a jitted function with a new signature (shapes,
dtypes, shardings, static arguments) is also exported with
``jax.export.export(..., platforms=[PLATFORM])``: JAX lowers it as it would for
the target (its TPU or CUDA lowering rules), and the serialized module, with
each input's sharding as mesh axes and a partition spec, is written to
``$KIT_TARGET_EXPORTS``. `repro.target_compile` compiles them for the target
in another process: loading libtpu into a program that runs collectives on CPU
devices broke them (a rendezvous timeout), so the target's compiler never
loads here.

Nothing here may change what the program does: every failure is written to
the manifest and swallowed, calls inside a trace (a jitted function called
from another one) are not exported, and the number of exports is bounded.
Exporting traces the function once more, so a ``print`` inside it prints twice.

Every computation the program calls is counted, each one a manifest line:
exported (``file``), the same module as one exported before (``same_as``: a
``jax.jit(f)`` rebuilt in a loop compiles once), not exported (``error``), or
past the bound (``over_limit``). A jitted object is kept alive once seen: it
is known by its ``id()``, and Python gives a freed object's id to the next
one, so a program that builds ``jax.jit(jax.value_and_grad(f))`` for each of
a dict of functions lost some of them as "already exported" (issue 58).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.abc
import importlib.util
import json
import os
import sys
import threading
from typing import Any, Dict, List, Optional, Sequence

EXPORTS_ENV = "KIT_TARGET_EXPORTS"
PLATFORM_ENV = "KIT_TARGET_PLATFORM"
MAX_EXPORTS = 64
MAX_SEEN = 4 * MAX_EXPORTS  # computations counted (and their jitted objects kept alive) at most
MAX_NOTES = 10_000  # manifest lines at most: a program that jits in an endless loop cannot fill the disk
MANIFEST = "manifest.jsonl"

_lock = threading.Lock()
_seen: Dict[tuple, Any] = {}
"""Each (jitted object's id, signature) seen, with the object: alive, so its id is never another's."""
_digests: Dict[str, str] = {}
"""Each exported module's SHA-256, with the file it went to."""
_exported = [0]
_notes = [0]


def install() -> None:
    """Wrap ``jax.jit`` when jax is imported (now, if it already is); nothing where the kit asked for no target."""
    if not os.environ.get(EXPORTS_ENV):
        return
    if "jax" in sys.modules:
        _patch(sys.modules["jax"])
        return
    sys.meta_path.insert(0, _JaxImported())


class _JaxImported(importlib.abc.MetaPathFinder):
    """Finds ``jax`` as the other finders do, and patches it once its module has run."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "jax":
            return None
        sys.meta_path.remove(self)  # once: the real finders answer from here on
        spec = importlib.util.find_spec("jax")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _patch(jax: Any) -> None:
    real = jax.jit
    if getattr(real, "_kit_target_export", False):
        return

    def jit(fun: Any = None, *args: Any, **kwargs: Any) -> Any:
        if fun is None:  # @jax.jit(static_argnums=...) on releases that allow it
            return lambda f: jit(f, *args, **kwargs)
        return _Exporting(real(fun, *args, **kwargs), kwargs, fun)

    jit._kit_target_export = True  # type: ignore[attr-defined]
    functools.update_wrapper(jit, real)
    _exclude_own_frames()
    jax.jit = jit


def _exclude_own_frames() -> None:
    """JAX names each op by the innermost frame not its own: a jit JAX applies inside itself (``solve_triangular``'s
    ``jit(_solve_triangular)``, built with the patched ``jax.jit``) is called from `_Exporting.__call__`, so its ops
    were said to be at "target_export.py:117", the kit's line, not the program's (the trial of issue 58). This
    file is excluded from that search as JAX's own files are (``register_exclusion``, jax 0.4.13 on)."""
    try:
        from jax._src import source_info_util

        source_info_util.register_exclusion(os.path.abspath(__file__))
    except Exception:  # a release without it: the kit drops this file's lines when it reads the HLO
        pass


class _Exporting:
    """A jitted function that also exports itself on each new signature; everything else is the jitted one's."""

    def __init__(self, jitted: Any, options: Dict[str, Any], fun: Any = None) -> None:
        self._jitted = jitted
        self._static_nums, self._static_names = _statics(fun, _as_tuple(options.get("static_argnums")),
                                                         _as_tuple(options.get("static_argnames")))
        functools.update_wrapper(self, jitted)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            _export(self._jitted, args, kwargs, self._static_nums, self._static_names)
        except Exception as error:  # never the program's failure: written down, and the call goes on
            _note({"error": _said(error), "function": _function_name(self._jitted)})
        return self._jitted(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jitted, name)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # A jitted method: bound as the jitted function would be.
        return self if instance is None else functools.partial(self, instance)


def _statics(fun: Any, nums: tuple, names: tuple) -> tuple:
    """The static arguments as jax.jit takes them: by position and by name, each found from the other through the
    function's signature (a ``static_argnames`` argument passed by position is static too)."""
    try:
        import inspect

        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # no signature to read (a builtin, a callable object without one)
        return nums, names
    nums = tuple(dict.fromkeys(nums + tuple(params.index(n) for n in names if n in params)))
    names = tuple(dict.fromkeys(names + tuple(params[i] for i in nums if -len(params) <= i < len(params))))
    return nums, names


def _export(jitted: Any, args: Sequence[Any], kwargs: Dict[str, Any], static_nums: tuple, static_names: tuple) -> None:
    import jax

    dynamic = [a for i, a in enumerate(args) if i not in static_nums and i - len(args) not in static_nums]
    dynamic += [v for k, v in sorted(kwargs.items()) if k not in static_names]
    leaves = jax.tree_util.tree_leaves(dynamic)
    if any(isinstance(leaf, _tracer(jax)) for leaf in leaves):
        return  # called inside another trace: the outer computation is the one compiled
    key = (id(jitted), repr(jax.tree_util.tree_structure(dynamic)),
           tuple(_leaf_key(leaf) for leaf in leaves),
           repr([a for i, a in enumerate(args) if i in static_nums or i - len(args) in static_nums]),
           # a static keyword's value makes a computation of its own (t7: conditioning(x, ridge=1e-3) after
           # ridge=1e-1 was "already seen" and never examined)
           repr(sorted((k, v) for k, v in kwargs.items() if k in static_names)))
    with _lock:
        if key in _seen or len(_seen) > MAX_SEEN:
            return
        _seen[key] = jitted if len(_seen) < MAX_SEEN else None
        over = _exported[0] >= MAX_EXPORTS
        _exported[0] += 0 if over else 1
    function = _function_name(jitted)
    if len(_seen) > MAX_SEEN:  # no more kept alive, so no more counted: the record says "at least"
        _note({"over_limit": True, "function": function, "uncounted": True})
        return
    if over:
        _note({"over_limit": True, "function": function})
        return
    platform = os.environ.get(PLATFORM_ENV, "tpu")
    try:
        exported = export_module(jax).export(jitted, platforms=[platform])(*args, **kwargs)
        blob = exported.serialize()
    except Exception as error:  # counted, named, and the program's call goes on
        _note({"error": _said(error), "function": function})
        return
    digest = hashlib.sha256(bytes(blob)).hexdigest()
    with _lock:
        first = _digests.get(digest)
        name = f"{len(_digests) + 1:04d}"
        if first is None:
            _digests[digest] = name + ".bin"
    if first is not None:  # the same module as one exported before: compiled once, counted as called
        _note({"same_as": first, "function": function})
        return
    folder = os.environ[EXPORTS_ENV]
    with open(os.path.join(folder, name + ".bin"), "wb") as out:
        out.write(blob)
    arrays = [leaf for leaf in leaves if hasattr(leaf, "shape") and hasattr(leaf, "dtype")]
    _note({"file": name + ".bin", "function": str(getattr(exported, "fun_name", "")) or function,
           "shardings": [_sharding(leaf) for leaf in arrays] if len(arrays) == len(exported.in_avals) else None,
           "inputs": len(exported.in_avals)})


def _function_name(jitted: Any) -> str:
    return str(getattr(jitted, "__name__", "") or type(jitted).__name__)[:200]


def _said(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}".splitlines()[0][:500] if str(error) else type(error).__name__


def _tracer(jax: Any) -> Any:
    tracer = getattr(jax.core, "Tracer", None)
    if tracer is None:
        from jax._src import core  # where newer releases keep it

        tracer = core.Tracer
    return tracer


def export_module(jax: Any) -> Any:
    """``jax.export`` (public from 0.4.30), else ``jax.experimental.export`` of the releases before: its
    ``export`` here, its ``deserialize`` in `repro.target_compile`."""
    try:
        from jax import export as public

        return public
    except ImportError as error:
        try:  # the releases before 0.4.30 kept it under jax.experimental
            from jax.experimental import export as experimental  # type: ignore[no-redef]
        except ImportError:
            raise error from None  # what the public module lacked says more than the old name's absence

        return experimental


def _leaf_key(leaf: Any) -> Any:
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        return (tuple(leaf.shape), str(leaf.dtype), repr(getattr(leaf, "sharding", None)))
    return (type(leaf).__name__,)


def _sharding(leaf: Any) -> Optional[Dict[str, Any]]:
    """A leaf's sharding as the target's compile rebuilds it: mesh axes and sizes, and the spec; None: replicated."""
    sharding = getattr(leaf, "sharding", None)
    mesh, spec = getattr(sharding, "mesh", None), getattr(sharding, "spec", None)
    if mesh is None or spec is None:
        return None
    shape = getattr(mesh, "devices", None)
    sizes = list(shape.shape) if shape is not None else [int(s) for s in dict(mesh.shape).values()]
    return {"axes": [str(name) for name in mesh.axis_names], "sizes": sizes,
            "spec": [_spec_part(part) for part in spec]}


def _spec_part(part: Any) -> Any:
    if part is None or isinstance(part, str):
        return part
    if isinstance(part, (tuple, list)):
        return [str(p) for p in part]
    return str(part)  # PartitionSpec.UNCONSTRAINED and the like: named, and the compile says what it makes of it


def _as_tuple(value: Any) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _note(entry: Dict[str, Any]) -> None:
    folder = os.environ.get(EXPORTS_ENV)
    if not folder:
        return
    with _lock:
        _notes[0] += 1
        if _notes[0] > MAX_NOTES:
            return
    with _lock, open(os.path.join(folder, MANIFEST), "a", encoding="utf-8") as manifest:
        manifest.write(json.dumps(entry) + "\n")


def counts(entries: Sequence[Dict[str, Any]]) -> Dict[str, int]:
    """What a manifest says of the computations the program called: how many (``called``), exported to compile
    (``exported``), the same as one exported (``same``), not exported (``failed``), past the bound (``over_limit``)."""
    return {"called": sum(1 for e in entries if {"file", "same_as", "error", "over_limit"} & set(e)),
            "uncounted": sum(1 for e in entries if e.get("uncounted")),
            "exported": sum(1 for e in entries if "file" in e), "same": sum(1 for e in entries if "same_as" in e),
            "failed": sum(1 for e in entries if "error" in e),
            "over_limit": sum(1 for e in entries if "over_limit" in e)}


def manifest(folder: str) -> List[Dict[str, Any]]:
    """What the run exported, and what failed to, in order."""
    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as lines:
            return [json.loads(line) for line in lines if line.strip()]
    except (OSError, ValueError):
        return []
