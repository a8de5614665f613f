"""PyTorch's OpInfo database (`op_db`) as sweep records: every op with autograd on CPU in float64.

Each op's first `SAMPLES` samples are taken as torch's own gradient tests take them (the tensors
that require grad are the differentiable inputs, everything else is a constant, the op's
`gradcheck_wrapper` and the sample's `output_process_fn_grad` applied), then perturbed
(`perturb.py`) into non-benign inputs of the same structure. The modes are those OpInfo claims;
the op's own expected failures and skips of torch's gradient tests go into `known`.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import Any

import numpy as np

from advalidate.sweep.literals import Unrepresentable, literal
from advalidate.sweep.perturb import variants
from advalidate.sweep.records import OpRecord
from advalidate.sweep.torch_xfails import xfail_text

#: Samples taken per op (the first ones torch yields); ADVALIDATE_SWEEP_SAMPLES overrides.
SAMPLES = 2
#: Samples whose differentiable inputs have more elements than this are left out (cost).
MAX_ELEMENTS = 400

#: torch's gradient tests -> the mode they test (OpInfo decorators and skips name them).
TEST_MODES = {
    "test_fn_grad": "reverse",
    "test_fn_gradgrad": "rev_over_rev",
    "test_forward_mode_AD": "forward",
    "test_fn_fwgrad_bwgrad": "fwd_over_rev",
}
GRAD_CLASSES = {None, "TestBwdGradients", "TestFwdGradients", "TestGradients"}


def op_database() -> list[Any]:
    """Every OpInfo with autograd that supports float64 on CPU."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    return [o for o in op_db if o.supports_autograd and torch.float64 in o.supported_dtypes("cpu")]


def op_names() -> list[str]:
    """The names of the eligible ops, as records name them."""
    return [op_key(o) for o in op_database()]


def op_key(o: Any) -> str:
    """The op's name in records: `name` or `name.variant` (e.g. scatter_reduce.prod)."""
    return f"{o.name}.{o.variant_test_name}" if o.variant_test_name else o.name


def claimed_modes(o: Any) -> frozenset[str]:
    """The modes OpInfo claims. Forward-over-forward is claimed where the forward formulas are
    claimed differentiable (supports_fwgrad_bwgrad): they are built from differentiable ops."""
    modes = {"reverse"}
    if o.supports_forward_ad:
        modes.add("forward")
    if o.supports_fwgrad_bwgrad:
        modes.add("fwd_over_rev")
        if o.supports_forward_ad:
            modes.add("fwd_over_fwd")
    if o.supports_gradgrad:
        modes.add("rev_over_rev")
    return frozenset(modes)


def _decorator_reason(dec: Any) -> str:
    """What a unittest decorator does: "expected failure" or "skipped: reason" ("" otherwise)."""
    name = getattr(dec, "__qualname__", "") or type(dec).__name__
    if "expectedFailure" in name:
        return "expected failure"
    if "skip" in name.lower():
        for cell in getattr(dec, "__closure__", None) or ():
            try:
                if isinstance(cell.cell_contents, str):
                    return f"skipped: {cell.cell_contents}"
            except ValueError:
                continue
        return "skipped"
    return ""


def autograd_dtypes(o: Any) -> frozenset[str]:
    """The dtypes (`records.DTYPES` names) OpInfo lists for the op's backward on CPU."""
    names = {str(d).removeprefix("torch.") for d in o.supported_backward_dtypes("cpu")}
    return frozenset(d for d in TORCH_DTYPES if d in names) | {"float64"}


def known_failures(o: Any, dtype: str = "float64") -> dict[str, str]:
    """mode (or "*") -> the op's own expected failure / skip of torch's gradient test for it,
    on CPU in `dtype`, with the database's own text where it has one (`xfail_text`)."""
    import torch

    own = getattr(torch, dtype)
    out: dict[str, str] = {}
    for info in chain(o.decorators, o.skips):
        if not hasattr(info, "test_name") or info.cls_name not in GRAD_CLASSES:
            continue
        if info.device_type not in (None, "cpu") or (info.dtypes and own not in info.dtypes):
            continue
        if not info.active_if:
            continue
        mode = TEST_MODES.get(info.test_name) if info.test_name else "*"
        if mode is None:
            continue
        for dec in info.decorators:
            reason = _decorator_reason(dec)
            if reason:
                out[mode] = f"{reason} ({info.cls_name or 'all classes'}.{info.test_name or '*'})"
                text = (
                    xfail_text(o.name, o.variant_test_name or "", info.test_name)
                    if reason == "expected failure"
                    else ""
                )
                if text:
                    out[mode] += f": {text}"
    return out


def _shrink_at_zero_threshold(source: str, args: tuple[np.ndarray, ...]) -> bool:
    m = re.search(r"lambd=([-+0-9.e]+)", source)
    return m is not None and float(m.group(1)) == 0.0 and bool(np.any(args[0] == 0))


#: What torch documents as an op's semantics where it differs from the derivative of the
#: mathematical function: op -> (does the record sit there?, the documented rule). Such records
#: go to known/ with the rule, never to findings/ (issue #22: documented choices are not bugs).
CONVENTIONS: dict[str, tuple[Callable[[str, tuple[np.ndarray, ...]], bool], str]] = {
    "nn.functional.hardshrink": (
        _shrink_at_zero_threshold,
        "documented: hardshrink(x) = 0 for |x| <= lambd; with lambd = 0 that branch is the point "
        "x = 0 and its derivative 0 is the branch's (a selection gradient)",
    ),
    "nn.functional.softshrink": (
        _shrink_at_zero_threshold,
        "documented: softshrink(x) = 0 for |x| <= lambd; with lambd = 0 that branch is the point "
        "x = 0 and its derivative 0 is the branch's (a selection gradient)",
    ),
    **{
        f"nn.functional.max_unpool{d}d": (
            lambda source, args: True,
            "documented: the database tests max_unpool's gradients in its `grad` variant only; its own "
            "samples repeat indices, and where several indices point to the same output element "
            "which write lands is undefined (OpInfo: 'non-determinism in backward with gather')",
        )
        for d in (1, 2, 3)
    },
    "to_sparse": (
        lambda source, args: bool(np.any(args[0] == 0)),
        "documented: gradients of sparse tensors follow masked semantics (unspecified elements, "
        "here the input's exact zeros, get none; pytorch/pytorch#103518)",
    ),
}


def convention(op: str, source: str, args: tuple[np.ndarray, ...]) -> dict[str, str]:
    """{"*": rule} when the record sits where torch documents its own semantics, else {}."""
    test, rule = CONVENTIONS.get(op, (None, ""))
    return {"*": rule} if test is not None and test(source, args) else {}


def _operator_expression(o: Any) -> str:
    """Source text naming the op's callable in torch's API ("" when it has no public name)."""
    import torch

    fn = o.op
    spaces = [
        ("torch", torch),
        ("torch.nn.functional", torch.nn.functional),
        ("torch.linalg", torch.linalg),
        ("torch.special", torch.special),
        ("torch.fft", torch.fft),
        ("torch.masked", torch.masked),
        ("torch.Tensor", torch.Tensor),
    ]
    names = {getattr(fn, "__name__", None), o.name.split(".")[-1], o.aten_name}
    for prefix, space in spaces:
        for name in names:
            if name and getattr(space, name, None) is fn:
                return f"{prefix}.{name}"
    method = o.method_variant
    for name in names:
        if name and method is not None and getattr(torch.Tensor, name, None) is method:
            return f"torch.Tensor.{name}"
    return ""


def _source_of(fn: Any) -> str:
    """The source of a closure-free named function (its def), preceded by the sources of the
    gradcheck wrappers it calls, or raise Unrepresentable."""
    if getattr(fn, "__name__", "") == "<lambda>" or fn.__code__.co_freevars:
        raise Unrepresentable(f"{fn.__qualname__} is a lambda or closure")
    helpers = [
        fn.__globals__[n]
        for n in fn.__code__.co_names
        if n.startswith("gradcheck_wrapper") and inspect.isfunction(fn.__globals__.get(n))
    ]
    own = inspect.getsource(fn)
    lines = own.splitlines()
    indent = len(lines[0]) - len(lines[0].lstrip())
    own = "\n".join(line[indent:] for line in lines)
    return "\n\n".join([*(_source_of(h) for h in helpers), own])


class _Sample:
    """One OpInfo sample split into differentiable tensors and a way to put them back."""

    def __init__(self, o: Any, s: Any) -> None:
        import torch

        self.o, self.s = o, s
        self.grads: list[Any] = []
        for x in chain(
            self._items(s.input), *(self._items(a) for a in s.args), *(self._items(v) for v in s.kwargs.values())
        ):
            if isinstance(x, torch.Tensor) and x.requires_grad:
                self.grads.append(x)
        self.usable = bool(self.grads) and all(
            g.layout == torch.strided and g.dtype == torch.float64 and g.numel() > 0 for g in self.grads
        )
        self.usable = self.usable and sum(g.numel() for g in self.grads) <= MAX_ELEMENTS

    @staticmethod
    def _items(x: Any) -> list[Any]:
        return list(x) if isinstance(x, list | tuple) else [x]

    def recompose(
        self, inputs: Sequence[Any], place: Callable[[int], str] | None = None, const: Callable[[Any], Any] = None
    ) -> Any:
        """(input, args, kwargs) with `inputs` in the places of the tensors that require grad;
        with `place`, source text instead (placeholders from `place(i)`, constants as literals);
        `const` maps each constant (a record in another dtype rounds its float64 tensors)."""
        import torch

        it = iter(range(len(self.grads)))

        def one(x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.requires_grad:
                i = next(it)
                return inputs[i] if place is None else place(i)
            if place is not None:
                return literal(x)
            return x if const is None else const(x)

        def slot(x: Any) -> Any:
            if isinstance(x, list | tuple) and x and all(isinstance(e, torch.Tensor) for e in x):
                items = [one(e) for e in x]
                if place is None:
                    return type(x)(items)
                return "[" + ", ".join(items) + "]"
            return one(x)

        inp = slot(self.s.input)
        args = [slot(a) for a in self.s.args]
        kwargs = {k: slot(v) for k, v in self.s.kwargs.items()}
        return inp, args, kwargs

    def function(self) -> Callable[..., Any]:
        return _Call(self)

    def call_source(self) -> str:
        """`def f(*args):` calling the op in torch's API, every constant a literal ("" if impossible)."""
        o, s = self.o, self.s
        expr = _operator_expression(o)
        if not expr:
            return ""
        try:
            inp, args, kwargs = self.recompose([], place=lambda i: f"args[{i}]")
            pre: list[str] = []
            wrapper = o.gradcheck_wrapper
            if getattr(wrapper, "__name__", "") != "<lambda>":
                pre.append(_source_of(wrapper))
            post = s.output_process_fn_grad
            post_name = ""
            if post is not None and "SampleInput.__init__" not in post.__qualname__:
                pre.append(_source_of(post))
                post_name = post.__name__
        except (Unrepresentable, OSError, TypeError) as exc:
            return f"# no source: {exc}"
        params = ", ".join([inp, *args, *(f"{k}={v}" for k, v in kwargs.items())])
        call = (
            f"{wrapper.__name__}({expr}, {params})"
            if pre and getattr(wrapper, "__name__", "") != "<lambda>"
            else f"{expr}({params})"
        )
        body = f"    return {post_name}({call})" if post_name else f"    return {call}"
        return "\n\n".join([*pre, "def f(*args):\n" + body]) + "\n"


#: A record's outputs by its dtype: those of its own precision (the rule's run) and their wide
#: counterparts (the differences' run), so both runs see the same outputs.
KEPT_OUTPUTS = {
    "float64": frozenset({"float64"}),
    "float32": frozenset({"float64", "float32"}),
    "bfloat16": frozenset({"float64", "bfloat16"}),
    "float16": frozenset({"float64", "float16"}),
    "complex128": frozenset({"float64", "complex128"}),
    "complex64": frozenset({"float64", "complex128", "float32", "complex64"}),
}
#: torch's dtypes by the names records use (`records.DTYPES`).
TORCH_DTYPES = ("float64", "float32", "bfloat16", "float16", "complex128", "complex64")


class _Call:
    """A sample's op as a function of its differentiable tensors, in float64 or (`retyped`) in
    another dtype: then its float64 constants are rounded to that dtype too, held in it when the
    rule runs and widened back when the differences evaluate the op at float64 (complex128)."""

    def __init__(self, smp: _Sample, dtype: str = "float64") -> None:
        self.smp, self.dtype = smp, dtype
        self.op = smp.o.get_op()

    def retyped(self, dtype: str) -> _Call:
        """The op in `dtype`; its `known_failures` are the database's for that dtype."""
        call = _Call(self.smp, dtype)
        call.known_failures = known_failures(self.smp.o, dtype)
        return call

    def _const(self, low: bool) -> Callable[[Any], Any] | None:
        import torch

        if self.dtype == "float64":
            return None
        own = getattr(torch, self.dtype)
        wide = torch.complex128 if own.is_complex else torch.float64

        def const(x: Any) -> Any:
            if isinstance(x, torch.Tensor) and x.dtype == torch.float64:
                return x.to(own) if low else x.to(own).to(wide)
            return x

        return const

    def __call__(self, *inputs: Any) -> Any:
        import torch

        o, s = self.smp.o, self.smp.s
        low = any(getattr(x, "dtype", torch.float64) not in (torch.float64, torch.complex128) for x in inputs)
        inp, args, kwargs = self.smp.recompose(inputs, const=self._const(low))
        out = o.gradcheck_wrapper(self.op, inp, *args, **kwargs)
        if s.output_process_fn_grad is not None:
            out = s.output_process_fn_grad(out)
        return float64_outputs(out, KEPT_OUTPUTS[self.dtype])


def float64_outputs(out: Any, dtypes: frozenset[str] | set[str] = frozenset({"float64"})) -> Any:
    """The float64 tensors of an output (a tensor, or nested tuples / lists), as a tuple when
    there are several; integer outputs (indices) and others are not differentiable. A record in
    another dtype keeps its outputs in `dtypes` too (float32, complex128, …)."""
    import torch

    leaves: list[Any] = []

    def walk(y: Any) -> None:
        if isinstance(y, list | tuple):
            for e in y:
                walk(e)
        elif (
            isinstance(y, torch.Tensor) and str(y.dtype).removeprefix("torch.") in dtypes and y.layout == torch.strided
        ):
            leaves.append(y)

    walk(out)
    return leaves[0] if len(leaves) == 1 else tuple(leaves)


def _nondiff_outputs(fn: Callable[..., Any], grads: Sequence[Any]) -> tuple[int, ...] | None:
    """Output positions that do not require grad when every input does (marked
    non-differentiable); None when the op fails or has no float64 output."""
    import torch

    xs = [g.detach().clone().requires_grad_(True) for g in grads]
    try:
        with torch.enable_grad():
            out = fn(*xs)
    except Exception:
        return None
    leaves = list(out) if isinstance(out, tuple) else [out]
    if not leaves or all(not isinstance(y, torch.Tensor) for y in leaves):
        return None
    return tuple(i for i, y in enumerate(leaves) if not y.requires_grad)


#: Samples of an op looked at when choosing which to take.
LOOK_AHEAD = 24


def _diverse_samples(o: Any, n: int) -> list[tuple[int, _Sample]]:
    """`n` usable samples of the op (with their index in its sample list): the first, then those
    whose input shapes differ from every one taken (batched after unbatched, the shapes where
    broadcasting and batching rules live), then the rest in order, among the first LOOK_AHEAD."""
    import torch

    usable = []
    for index, s in enumerate(o.sample_inputs("cpu", torch.float64, requires_grad=True)):
        if index >= LOOK_AHEAD or len(usable) >= 4 * n:
            break
        smp = _Sample(o, s)
        if smp.usable:
            usable.append((index, smp))
    taken: list[tuple[int, _Sample]] = []
    seen: set[tuple[tuple[int, ...], ...]] = set()
    for index, smp in usable:
        shapes = tuple(tuple(g.shape) for g in smp.grads)
        if len(taken) < n and shapes not in seen:
            taken.append((index, smp))
            seen.add(shapes)
    rest = [u for u in usable if u not in taken]
    return sorted(taken + rest[: max(0, n - len(taken))], key=lambda u: u[0])


def records(*, ops: Sequence[str] | None = None, seed: int = 0, samples: int | None = None) -> Iterator[OpRecord]:
    """The records of every eligible op (or those named in `ops`, by `op_key` or plain name)."""
    import torch

    n_samples = samples if samples is not None else int(os.environ.get("ADVALIDATE_SWEEP_SAMPLES", SAMPLES))
    wanted = set(ops) if ops is not None else None
    for o in op_database():
        key = op_key(o)
        if wanted is not None and not wanted & {key, o.name, key.rsplit(".", 1)[-1] if "." in o.name else key}:
            continue
        modes, known, dtypes = claimed_modes(o), known_failures(o), autograd_dtypes(o)
        torch.manual_seed(seed)
        try:
            for index, smp in _diverse_samples(o, n_samples):
                fn = smp.function()
                nondiff = _nondiff_outputs(fn, smp.grads)
                if nondiff is None:
                    continue
                base = tuple(g.detach().numpy().astype(np.float64).copy() for g in smp.grads)
                source = smp.call_source()
                for variant, args in variants(base, fn, seed=seed, salt=f"{key}/{index}"):
                    yield OpRecord(
                        library="torch",
                        op=key,
                        sample=index,
                        variant=variant,
                        fn=fn,
                        args=args,
                        modes=modes,
                        known={**known, **convention(key, source, args)},
                        call_source=source,
                        nondiff_outputs=nondiff,
                        dtypes=dtypes,
                    )
        except Exception:  # noqa: BLE001 - an op whose sample generator fails has no records
            continue
