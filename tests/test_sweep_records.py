"""The sweep record interface: the dispatcher and the record's shape (shared with jax_records)."""

import numpy as np
import pytest

from advalidate.sweep import MODES, OpRecord, records


def test_unknown_library_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown library 'numpy'"):
        records("numpy")


def test_record_defaults_and_immutability():
    r = OpRecord(
        library="torch",
        op="sin",
        sample=0,
        variant="sample",
        fn=np.sin,
        args=(np.zeros(2),),
        modes=frozenset(MODES),
    )
    assert r.known == {} and r.call_source == "" and r.nondiff_outputs == ()
    with pytest.raises(AttributeError):
        r.op = "cos"  # type: ignore[misc]
