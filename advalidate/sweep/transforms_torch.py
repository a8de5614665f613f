"""PyTorch's AD modes under a transform, for `advalidate sweep torch --transform` (issue #38 item 1).

Each transform is an object with the functions of `modes_torch` (leaves, tensor, vjp, jvp,
func_jvp, reverse_fn, forward_fn), so `check.check_record`'s plan runs every mode under it:

- checkpoint: the op runs as `checkpoint(fn, *xs, use_reentrant=False)`; every rule is eager
  torch.autograd's (the backward recomputes the op; the second orders differentiate through that).
- func: torch.func as the AD front end, by Jacobians contracted with the direction: reverse is
  `jacrev`, forward `jacfwd`, fwd_over_rev `jacfwd(jacrev)` (hessian's composition), rev_over_rev
  `jacrev(jacrev)`, fwd_over_fwd `jacfwd(jacfwd)` — vmap over the rules, as torch.func runs them.
  Complex ops by `vjp` / `jvp`: a non-holomorphic function's derivative is only R-linear, so its
  Jacobian cannot be contracted with a complex direction.
- vmap: `torch.func.vjp` / `jvp` (and their compositions) under `torch.func.vmap` over the batch
  [x, 0.75 x, x]; a rule's value is the mean of the two slices at x, so a batching rule that
  corrupts either slice, or mixes the other point in, changes it.
- aot_eager, inductor: reverse is torch.autograd through `torch.compile(fn)` (AOTAutograd's compiled
  backward, as training runs it). torch refuses dual tensors and double backward through a compiled
  function, so forward mode and the second orders are `torch.compile` of the torch.func computation
  (dynamo traces torch.func.jvp / vjp): compiled forward and second derivatives as torch offers
  them. Always `fullgraph=True`: a graph break runs the op eagerly and silently (torch 2.14 does so
  for dual tensors), so it raises instead and the mode is refused, never judged as eager torch.

The first-order passes (`reverse_fn`, `forward_fn`) evaluate eagerly: the reference whose
differences judge the second orders. The transform's own version of the pass (`Pass.raw`) is
what its rules differentiate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

from advalidate.sweep import modes_torch as eager
from advalidate.sweep.modes_torch import _pack, leaves, tensor

Fn = Callable[..., Any]
#: The second point of a vmap batch, as a multiple of x: keeps signs, zeros, triangles and
#: positive definiteness, and stays inside [-1, 1] where x is.
VMAP_SCALE = 0.75
#: dynamo's recompiles per code object before it errs (never falls back to eager: see `_configure`).
RECOMPILE_LIMIT = 64


class Pass:
    """A first-order pass x -> Jᵀ(x)u or J(x)t: called, it is eager torch's (the reference);
    `raw` is the same pass built by the transform, what the transform's rules differentiate."""

    def __init__(self, ref: Fn, raw: Fn) -> None:
        self.ref, self.raw = ref, raw

    def __call__(self, *xs: Any) -> Any:
        return self.ref(*xs)


def _raw(fn: Fn) -> Fn:
    return fn.raw if isinstance(fn, Pass) else fn


def _nonzero(cots: Sequence[Any]) -> tuple[int, ...]:
    """The outputs with a cotangent that is not all zero (torch leaves out the others' paths)."""
    return tuple(j for j, c in enumerate(cots) if bool(torch.any(c != 0)))


def _complex(ts: Sequence[Any]) -> bool:
    return any(t.is_complex() for t in ts)


def vjp_core(fn: Fn, keep: tuple[int, ...], jac: bool) -> Callable[..., tuple[Any, ...]]:
    """(cots, *xs) -> Jᵀu over the outputs in `keep`, by torch.func (jacrev contracted with u when `jac`)."""

    def g(*xs: Any) -> tuple[Any, ...]:
        outs = leaves(fn(*xs))
        return tuple(outs[j] for j in keep)

    def core(cots: Sequence[Any], *xs: Any) -> tuple[Any, ...]:
        if not keep:
            return tuple(torch.zeros_like(x) for x in xs)
        if jac and not _complex(xs):
            jacs = torch.func.jacrev(g, argnums=tuple(range(len(xs))))(*xs)
            if not any(_complex(row) for row in jacs):
                return tuple(
                    _sum(_contract(cots[j], m, m.ndim - x.ndim) for j, m in zip(keep, (row[i] for row in jacs)))
                    for i, x in enumerate(xs)
                )
        ys, pull = torch.func.vjp(g, *xs)
        return tuple(pull(tuple(cots[j].reshape(y.shape).to(y.dtype) for j, y in zip(keep, ys))))

    return core


def jvp_core(fn: Fn, jac: bool) -> Callable[..., tuple[Any, ...]]:
    """(ts, *xs) -> J t for every output, by torch.func (jacfwd contracted with t when `jac`)."""

    def g(*xs: Any) -> tuple[Any, ...]:
        return tuple(leaves(fn(*xs)))

    def core(ts: Sequence[Any], *xs: Any) -> tuple[Any, ...]:
        ts = tuple(t.reshape(x.shape).to(x.dtype) for t, x in zip(ts, xs))
        if jac and not _complex(xs):
            jacs = torch.func.jacfwd(g, argnums=tuple(range(len(xs))))(*xs)
            if not any(_complex(row) for row in jacs):
                return tuple(_sum(torch.tensordot(m, t, dims=t.ndim) for m, t in zip(row, ts)) for row in jacs)
        return tuple(torch.func.jvp(g, tuple(xs), ts)[1])

    return core


def _contract(cot: Any, jac: Any, out_ndim: int) -> Any:
    """uᵀJ for one output's block J (its shape: the output's, then the input's)."""
    return torch.tensordot(cot.reshape(jac.shape[:out_ndim]).to(jac.dtype), jac, dims=out_ndim)


def _sum(terms: Any) -> Any:
    total = None
    for t in terms:
        total = t if total is None else total + t
    return total


def _rule(core_of: Callable[[tuple[int, ...]], Callable[..., tuple[Any, ...]]], reverse: bool) -> Fn:
    """rule(direction, *xs) (check_function's vjp= / jvp= convention) from a core builder keyed
    by the kept outputs (reverse) or by nothing (forward); one core per key."""
    cores: dict[tuple[int, ...], Callable[..., tuple[Any, ...]]] = {}

    def rule(direction: Any, *xs: Any) -> Any:
        ds = tuple(leaves(direction))
        key = _nonzero(ds) if reverse else ()
        if key not in cores:
            cores[key] = core_of(key)
        return _pack(cores[key](ds, *xs))

    return rule


class _Transform:
    """The modes under one transform; `reverse_fn` / `forward_fn` evaluate eagerly (`Pass`)."""

    name = ""
    DIRECTIONS_AT_POINT_PRECISION = eager.DIRECTIONS_AT_POINT_PRECISION
    leaves = staticmethod(leaves)
    tensor = staticmethod(tensor)

    def _rev_raw(self, fn: Fn, cots: Sequence[Any]) -> Fn:
        raise NotImplementedError

    def _fwd_raw(self, fn: Fn, tangents: Sequence[Any]) -> Fn:
        raise NotImplementedError

    def reverse_fn(self, fn: Fn, cots: Sequence[Any]) -> Pass:
        return Pass(eager.reverse_fn(fn, cots), self._rev_raw(fn, cots))

    def forward_fn(self, fn: Fn, tangents: Sequence[Any]) -> Pass:
        return Pass(eager.forward_fn(fn, tangents), self._fwd_raw(fn, tangents))

    def func_jvp(self, fn: Fn) -> Fn:
        return self.jvp(fn)


class Checkpoint(_Transform):
    """torch.utils.checkpoint (non-reentrant) around the op; torch.autograd's rules."""

    name = "checkpoint"

    @staticmethod
    def wrap(fn: Fn) -> Fn:
        def checkpointed(*xs: Any) -> Any:
            return checkpoint(fn, *xs, use_reentrant=False)

        return checkpointed

    def _op(self, fn: Fn) -> Fn:
        return fn.raw if isinstance(fn, Pass) else self.wrap(fn)

    def _rev_raw(self, fn: Fn, cots: Sequence[Any]) -> Fn:
        return eager.reverse_fn(self.wrap(fn), cots)

    def _fwd_raw(self, fn: Fn, tangents: Sequence[Any]) -> Fn:
        return eager.forward_fn(self.wrap(fn), tangents)

    def vjp(self, fn: Fn) -> Fn:
        return eager.vjp(self._op(fn))

    def jvp(self, fn: Fn) -> Fn:
        return eager.jvp(self._op(fn))

    def func_jvp(self, fn: Fn) -> Fn:
        return eager.func_jvp(self._op(fn))


class Func(_Transform):
    """torch.func as the AD front end: jacrev / jacfwd and their compositions."""

    name = "func"
    jac = True

    def _rev_raw(self, fn: Fn, cots: Sequence[Any]) -> Fn:
        core, cs = vjp_core(fn, _nonzero(cots), self.jac), tuple(cots)
        return lambda *xs: _pack(core(cs, *xs))

    def _fwd_raw(self, fn: Fn, tangents: Sequence[Any]) -> Fn:
        core, ts = jvp_core(fn, self.jac), tuple(tangents)
        return lambda *xs: _pack(core(ts, *xs))

    def _finish(self, core: Callable[..., tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
        """What the transform does to a rule's core (nothing: torch.func's rules as they are)."""
        return core

    def vjp(self, fn: Fn) -> Fn:
        f = _raw(fn)
        return _rule(lambda keep: self._finish(vjp_core(f, keep, self.jac)), reverse=True)

    def jvp(self, fn: Fn) -> Fn:
        f = _raw(fn)
        return _rule(lambda _key: self._finish(jvp_core(f, self.jac)), reverse=False)


class Vmap(Func):
    """torch.func.vjp / jvp under torch.func.vmap over [x, VMAP_SCALE x, x]: the mean of the slices at x."""

    name = "vmap"
    jac = False

    def _finish(self, core: Callable[..., tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
        batched = torch.func.vmap(core)

        def rule(ds: Sequence[Any], *xs: Any) -> tuple[Any, ...]:
            xb = tuple(torch.stack([x, x * VMAP_SCALE, x]) for x in xs)
            db = tuple(torch.stack([d, d, d]) for d in ds)
            return tuple((o[0] + o[2]) / 2 for o in batched(db, *xb))

        return rule


def _configure() -> None:
    """dynamo errs instead of running eagerly: past the recompile limit it would fall back to
    eager torch with a warning only; the limit is raised since the sweep compiles many closures
    of one code object (the records of one op)."""
    import torch._dynamo

    cfg = torch._dynamo.config
    cfg.recompile_limit = cfg.accumulated_recompile_limit = RECOMPILE_LIMIT
    cfg.fail_on_recompile_limit_hit = True
    cfg.suppress_errors = False


class Compiled(Func):
    """torch.compile with `backend`: AOTAutograd's compiled backward for reverse mode, compiled
    torch.func for forward mode and the second orders (module docstring)."""

    jac = False

    def __init__(self, backend: str) -> None:
        self.name = "aot_eager" if backend == "aot_eager" else "inductor"
        self.backend = backend
        self._primal: Fn | None = None
        self._compiled_primal: Fn | None = None

    def compile(self, fn: Fn) -> Fn:
        _configure()
        return torch.compile(fn, backend=self.backend, fullgraph=True, dynamic=False)

    def _finish(self, core: Callable[..., tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
        return self.compile(core)

    def _start(self, fn: Fn) -> Fn:
        """The compiled primal, compiled once per op function (its records' variants share it);
        a new op function clears dynamo's caches, so compiled code does not pile up over a sweep."""
        if fn is not self._primal:
            import torch._dynamo

            torch._dynamo.reset()
            self._primal, self._compiled_primal = fn, self.compile(fn)
        assert self._compiled_primal is not None
        return self._compiled_primal

    def reverse_fn(self, fn: Fn, cots: Sequence[Any]) -> Pass:
        self._start(fn)
        return super().reverse_fn(fn, cots)

    def vjp(self, fn: Fn) -> Fn:
        if isinstance(fn, Pass):
            return super().vjp(fn)
        return eager.vjp(self._start(fn))


_TRANSFORMS: dict[str, Callable[[], Any]] = {
    "checkpoint": Checkpoint,
    "func": Func,
    "vmap": Vmap,
    "aot_eager": lambda: Compiled("aot_eager"),
    "inductor": lambda: Compiled("inductor"),
}
_MADE: dict[str, Any] = {}


def transformed(name: str) -> Any:
    """The modes under transform `name` (`records.TRANSFORMS["torch"]`): "eager" is `modes_torch`
    itself, the others one object per name (the compiled ones keep state)."""
    if name == "eager":
        return eager
    if name not in _TRANSFORMS:
        raise ValueError(f"unknown torch transform {name!r}; known: eager, {', '.join(_TRANSFORMS)}")
    if name not in _MADE:
        _MADE[name] = _TRANSFORMS[name]()
    return _MADE[name]
