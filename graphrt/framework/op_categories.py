"""Op categories that the builders, the partitioner, the verifier, the
executors and the views all treat alike, each defined once.

They live in the framework, the lowest layer that knows op types, so that
every layer above can import them (a set repeated per module drifts: one
copy gains a Ref variant, another does not).
"""

# Transfers between partitions, inserted by the partitioner (ops/comm_ops.py).
SEND_OPS = frozenset({"_Send"})
RECV_OPS = frozenset({"_Recv"})
TRANSFER_OPS = SEND_OPS | RECV_OPS

# The step's call frame: feeds and fetches of a local session (TF's function convention).
CALL_FRAME_OPS = frozenset({"_Arg", "_Retval"})

# Control flow (ops/control_flow_ops.py), each with its reference-typed twin.
SWITCH_OPS = frozenset({"Switch", "RefSwitch"})
MERGE_OPS = frozenset({"Merge", "RefMerge"})
ENTER_OPS = frozenset({"Enter", "RefEnter"})
EXIT_OPS = frozenset({"Exit", "RefExit"})
NEXT_ITERATION_OPS = frozenset({"NextIteration", "RefNextIteration"})
CONTROL_FLOW_OPS = SWITCH_OPS | MERGE_OPS | ENTER_OPS | EXIT_OPS | NEXT_ITERATION_OPS | {"LoopCond"}
