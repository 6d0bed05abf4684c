"""TF 2's behaviour switches: the ones asking for what graphrt does are accepted; the others
raise NotImplementedError saying what graphrt does instead."""
import pytest

import graphrt as tf


def test_accepted_switches_change_nothing(graph):
    for switch in (tf.disable_eager_execution, tf.disable_v2_behavior, tf.disable_resource_variables,
                   tf.enable_resource_variables, tf.disable_v2_tensorshape, tf.enable_v2_tensorshape,
                   tf.disable_control_flow_v2, tf.disable_tensor_equality):
        assert switch() is None
    assert not tf.resource_variables_enabled() and not tf.control_flow_v2_enabled() and not tf.executing_eagerly()
    assert type(tf.get_variable("v", [2], use_resource=True)).__name__ == "Variable"  # still a ref variable


@pytest.mark.parametrize("switch, message", [
    ("enable_eager_execution", "graphrt has no eager mode: it builds graphs and runs them in a tf.Session"),
    ("enable_v2_behavior", "graphrt has no TF 2 behaviour"),
    ("enable_control_flow_v2", "graphrt has no control flow v2"),
    ("enable_tensor_equality", "use tf.equal"),
])
def test_refused_switches_say_what_graphrt_does(switch, message):
    with pytest.raises(NotImplementedError, match=message):
        getattr(tf, switch)()
