"""A distributed step leaves no reference cycles behind, on the master or on the workers: the
steps' objects and tensors are freed when each step ends (see tests/runtime/test_step_garbage.py)."""
from ..helpers import graphrt_cycles
from .test_step_latency_paths import _inline_remote_step


def test_a_two_task_step_leaves_no_reference_cycles():
    # task 1 is reached through its socket, as another process would be, and runs its part inline
    with _inline_remote_step() as (_, sess, y, _):
        assert graphrt_cycles(lambda: sess.run(y)) == {}
        assert sess.run(y) == 7.0
