"""The names a user can give: engines, adapters, oracles, program families and generator features,
with where each engine and oracle is defined (`module:attr`).

Readable without importing any of them, so that `advalidate --help` (which lists them all) starts in
milliseconds instead of loading every engine, oracle, numpy, sympy and Hypothesis. The registries
are built from these tables (`impl.registry` loads an engine when it is asked for, `oracles.check`
builds `ORACLES`); tests/test_names.py checks the family names against `generators.families`. This
module imports nothing of advalidate.
"""

from __future__ import annotations

import importlib
from typing import Any

#: The built-in engines, in the order of the paper's stages: name -> `module:attr` of its class.
ENGINES: dict[str, str] = {
    "naive": "advalidate.impl.seed000.naive:Naive",
    "staged": "advalidate.impl.seed000.staged:StagedStage",
    "cayley": "advalidate.impl.seed000.cayley:CayleyStage",
    "sparse": "advalidate.impl.seed000.sparse:SparseStage",
    "mutable": "advalidate.impl.seed000.mutable:MutableStage",
    "tape": "advalidate.impl.seed000.tape:TapeStage",
    "parallel": "advalidate.impl.seed000.parallel:ParallelStage",
    "forward": "advalidate.impl.seed000.forward:ForwardStage",
    # seed 004: array reverse AD
    "delta": "advalidate.impl.seed004.scalar:DeltaStage",
    "dualarrays": "advalidate.impl.seed004.dualarrays:DualArraysStage",
    "bot": "advalidate.impl.seed004.dualarrays:BotStage",
    "compiled": "advalidate.impl.seed004.compiled:CompiledStage",
}

#: Seed 001's elimination of derivative operators, `(stage, program) -> core program`: what every
#: stage that supports "nested" translates a program with `grad` / `vjp` / `jvp` into first
#: (`seed000.stage.Stage.eliminate`). Seed 001 builds on seed 000, so seed 000 loads it by name.
ELIMINATE = "advalidate.impl.seed001:eliminate_for_stage"

#: Engines of outside AD libraries (advalidate.libraries.NAME): name -> (`module:attr` of its class,
#: the library it needs, the pip extra that installs it). Imported only when asked for, so the
#: libraries stay optional.
ADAPTERS: dict[str, tuple[str, str, str]] = {
    "autograd": ("advalidate.libraries.autograd.engines:AutogradEngine", "autograd", "peers"),
    "jax": ("advalidate.libraries.jax.engines:JaxEngine", "jax", "peers"),
    "jax-jit": ("advalidate.libraries.jax.engines:JaxJitEngine", "jax", "peers"),
    "jax-vmap": ("advalidate.libraries.jax.transforms:JaxVmapEngine", "jax", "peers"),
    "jax-checkpoint": ("advalidate.libraries.jax.transforms:JaxCheckpointEngine", "jax", "peers"),
    "jax-checkpoint-policy": ("advalidate.libraries.jax.transforms:JaxCheckpointPolicyEngine", "jax", "peers"),
    "jax-vmap-jit": ("advalidate.libraries.jax.transforms:JaxVmapJitEngine", "jax", "peers"),
    "jax-checkpoint-jit": ("advalidate.libraries.jax.transforms:JaxCheckpointJitEngine", "jax", "peers"),
    "jax-checkpoint-policy-jit": (
        "advalidate.libraries.jax.transforms:JaxCheckpointPolicyJitEngine",
        "jax",
        "peers",
    ),
    "jax-scan": ("advalidate.libraries.jax.control:JaxScanEngine", "jax", "peers"),
    "jax-cond": ("advalidate.libraries.jax.control:JaxCondEngine", "jax", "peers"),
    "jax-scan-jit": ("advalidate.libraries.jax.control:JaxScanJitEngine", "jax", "peers"),
    "jax-cond-jit": ("advalidate.libraries.jax.control:JaxCondJitEngine", "jax", "peers"),
    "torch": ("advalidate.libraries.torch.engines:TorchEngine", "torch", "torch"),
    "torch-index": ("advalidate.libraries.torch.engines:TorchIndexEngine", "torch", "torch"),
    "torch-func": ("advalidate.libraries.torch.func:TorchFuncEngine", "torch", "torch"),
    "torch-checkpoint": ("advalidate.libraries.torch.transforms:TorchCheckpointEngine", "torch", "torch"),
    "torch-vmap": ("advalidate.libraries.torch.transforms:TorchVmapEngine", "torch", "torch"),
    "torch-compile": ("advalidate.libraries.torch.compile:TorchCompileEngine", "torch", "torch"),
    "torch-inductor": ("advalidate.libraries.torch.compile:TorchInductorEngine", "torch", "torch"),
    # one package per library (advalidate/libraries/, issue #39)
    "tensorflow": ("advalidate.libraries.tensorflow.engines:TensorflowEngine", "tensorflow", "tensorflow"),
    "tensorflow-function": (
        "advalidate.libraries.tensorflow.engines:TensorflowFunctionEngine",
        "tensorflow",
        "tensorflow",
    ),
    "tensorflow-xla": ("advalidate.libraries.tensorflow.engines:TensorflowXlaEngine", "tensorflow", "tensorflow"),
}

#: The oracles, in the order `check` runs them: name -> `module:attr` of its class.
ORACLES: dict[str, str] = {
    "symbolic": "advalidate.oracles.symbolic:SymbolicOracle",
    "fd": "advalidate.oracles.fd:FiniteDifferenceOracle",
    "forward": "advalidate.oracles.forward:ForwardOracle",
    "cross": "advalidate.oracles.cross:CrossOracle",
    "once": "advalidate.oracles.once:OnceOracle",
    "linear": "advalidate.oracles.linear:LinearOracle",
    "bot": "advalidate.oracles.bot:BotOracle",
    # the library against itself under its own semantics (issue #15)
    "consistency": "advalidate.oracles.consistency:ConsistencyOracle",
}

#: The program families of the complexity work (`generators.families.FAMILIES`, same order).
FAMILIES: tuple[str, ...] = (
    "doubling",
    "doubling_loop",
    "f_pattern",
    "wide_sparse",
    "wide_reread",
    "deep_input",
    "dot",
    "summatvec",
    "rotate_vec_by_quat",
    "neural",
    "particles",
    "par_dag",
    "map_fold",
    "hof_compose",
)

#: Feature flags of the generator (swarm testing). A program is generated with a subset of them
#: enabled; the rules a feature governs are never used without it. Arithmetic (+ - * / and
#: negation) is always on.
FEATURES: tuple[str, ...] = (
    "let",  # let (with deliberate sharing of the bound value)
    "lambda",  # user functions: let-bound lambdas, applications, closures
    "hof",  # functions passed to and returned from functions
    "pairs",  # tuples, projections, pair patterns
    "sums",  # coproducts, inl / inr, case
    "cond",  # if / case on Bool, real and integer comparisons
    "letrec",  # recursion on a decreasing integer or on a list
    "lists",  # list literals, cons, case on lists, map, sum, length
    "fold",  # foldl and zipWith (with "lists")
    "par",  # par (fork-join pairs); parmap (with "lists")
    "ints",  # Z values and arithmetic, real
    "transc",  # sin cos tan exp log sqrt tanh atan
    "arrays",  # shape-typed arrays of seed 004 §3 (rules in `arrays.py`; its own share of the swarm mix)
    "nested",  # seed 001 grad / vjp / jvp (rules in `nested.py`; own share; with arrays when both are given)
    "special",  # expm1 .. floor, pow atan2 hypot min max (rules in `specials.py`; its own share of the mix)
)


def load(spec: str) -> Any:
    """The object a built-in `module:attr` names (the module is imported on this call)."""
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)
