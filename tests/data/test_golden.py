"""tf.data programs compared with what TensorFlow 2.21 (tf.compat.v1, graph mode) gave
for them: exact element sequences, static structures and the end of each sequence.

cases/ and golden/ are the "data" set of tests/tf1_programs/programs.py; golden/ is written by

    TF_USE_LEGACY_KERAS=1 python tests/tf1_programs/programs.py --impl tf --write --set data

with a Python environment where TensorFlow 2.21 is installed (never a dependency of graphrt).
"""
import pytest

import graphrt
from tests.tf1_programs.programs import case_names, compare, golden, run_case


@pytest.mark.parametrize("name", case_names("data"))
def test_pipeline_matches_tensorflow(name):
    want = golden("data", name)
    assert want, name
    problems = compare(run_case("data", name, graphrt), want)
    assert not problems, "\n".join(problems[:20])


def test_goldens_hold_the_end_of_each_sequence():
    """The fixtures themselves say every pipeline ended with OutOfRangeError, twice."""
    want = golden("data", "pipeline")
    for key in "abcde":
        assert str(want[f"{key}/end"]) == "OutOfRangeError"
        assert str(want[f"{key}/again"]) == "OutOfRangeError"
    # e: flat_map of from_tensors(n).repeat(n) for n = 1..3, then 7, 8
    got = [int(want[f"e/elements/{i}"]) for i in range(8)]
    assert got == [1, 2, 2, 3, 3, 3, 7, 8]
