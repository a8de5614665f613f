"""The driver and forward-mode templates of an autograd finding's repro.py (`impl/adapters/repro.py`
writes the rest: the traced straight-line `f`, the data, the verdict).

`library_gradient` is `autograd.grad` of ⟨f(x), dy⟩, one argument at a time; autograd's engine has
no forward mode here, so `forward_gradient` raises and the script judges reverse mode against
differences of its own primal only. The script needs autograd and numpy only.
"""

from __future__ import annotations

DRIVER = """
LIBRARY = "autograd"


def primal(xs):
    return f(*[np.array(v, dtype=np.float64) for v in xs])


def library_gradient(xs, dy):
    def loss(*a):
        return sum(anp.sum(y * np.array(d, dtype=np.float64)) for y, d in zip(f(*a), dy))

    args = [np.array(v, dtype=np.float64) for v in xs]
    return [grad(loss, k)(*args) for k in range(len(args))]
"""

FORWARD = """


def forward_gradient(xs, dy):
    \"\"\"The autograd engine is judged against differences of its own primal only.\"\"\"
    raise NotImplementedError("no forward mode here: autograd's reverse mode against differences only")
"""
