"""tf.data programs compared with what TensorFlow 2.21 (tf.compat.v1, graph mode) gave
for them: exact element sequences, static structures and the end of each sequence.

golden/ is written by

    TF_USE_LEGACY_KERAS=1 python tests/tf1_programs/programs.py --impl tf --write --set data

with a Python environment where TensorFlow 2.21 is installed (never a dependency of graphrt).
"""
import importlib.util
import os

import numpy as np
import pytest

import graphrt
from tests.tf1_programs.programs import compare, flatten

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = sorted(f[:-3] for f in os.listdir(os.path.join(HERE, "cases")) if f.endswith(".py"))


def load_case(name):
    spec = importlib.util.spec_from_file_location(f"data_case_{name}", os.path.join(HERE, "cases", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden(name):
    with np.load(os.path.join(HERE, "golden", f"{name}.npz"), allow_pickle=False) as z:
        return {k.replace("|", "/"): z[k] for k in z.files}


@pytest.mark.parametrize("name", CASES)
def test_pipeline_matches_tensorflow(name):
    want = golden(name)
    assert want, name
    got = flatten(load_case(name).run(graphrt, np), "", {})
    problems = compare(got, want)
    assert not problems, "\n".join(problems[:20])


def test_goldens_hold_the_end_of_each_sequence():
    """The fixtures themselves say every pipeline ended with OutOfRangeError, twice."""
    want = golden("pipeline")
    for key in "abcde":
        assert str(want[f"{key}/end"]) == "OutOfRangeError"
        assert str(want[f"{key}/again"]) == "OutOfRangeError"
    # e: flat_map of from_tensors(n).repeat(n) for n = 1..3, then 7, 8
    got = [int(want[f"e/elements/{i}"]) for i in range(8)]
    assert got == [1, 2, 2, 3, 3, 3, 7, 8]
