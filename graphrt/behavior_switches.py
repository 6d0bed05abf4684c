"""TF 2's behaviour switches, as `tf.compat.v1` scripts call them at the top.

graphrt has one behaviour: TF 1's graphs (no eager mode, v1 control flow, ref
variables, identity `==` on tensors, TensorShape printing `None` for an
unknown dimension as TF 2 does). Each switch that asks for that is accepted;
each that asks for something else raises NotImplementedError saying what
graphrt does instead, rather than being silently ignored.
"""


def _unsupported(what, instead):
    raise NotImplementedError(f"graphrt has no {what}: {instead}")


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    _unsupported("eager mode", "it builds graphs and runs them in a tf.Session")


def enable_v2_behavior():
    _unsupported("TF 2 behaviour (eager execution, functions)", "it runs TF 1 graphs, as tf.compat.v1 with "
                 "disable_v2_behavior() does")


def disable_resource_variables():
    """Accepted: graphrt builds TF 1 ref variables (graphs with resource variables still import and run)."""


def enable_resource_variables():
    """Accepted: graphrt keeps building ref variables (same values; `use_resource` is ignored likewise),
    and runs the resource variables of imported TF 2 graphs."""


def resource_variables_enabled():
    return False


def disable_v2_tensorshape():
    """Accepted: TensorShape dimensions are ints or None, as TF 2's are; nothing changes."""


def enable_v2_tensorshape():
    """Accepted: graphrt's TensorShape already behaves as TF 2's."""


def disable_control_flow_v2():
    """Accepted: graphrt's cond and while_loop are TF 1's (Switch/Merge, Enter/Exit frames)."""


def enable_control_flow_v2():
    _unsupported("control flow v2 (functional If/While)", "tf.cond and tf.while_loop build TF 1's frames, which "
                 "give the same values")


def control_flow_v2_enabled():
    return False


def disable_tensor_equality():
    """Accepted: `==` on tensors is identity in graphrt, as in TF 1 graphs."""


def enable_tensor_equality():
    _unsupported("elementwise `==` on tensors", "use tf.equal; `==` compares identity, as in TF 1 graphs")
