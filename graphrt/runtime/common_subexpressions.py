"""Common subexpression elimination for compiled schedules, as TF's graph
optimizer does by default (OptimizerOptions.do_common_subexpression_elimination,
grappler's common subgraph elimination): two nodes of the same op with the
same attrs, the same inputs and the same control inputs compute the same
value, so an untimed step computes it once and both readers share it.

Only pure kernels are shared: constants of equal small values, and
synchronous stateless ops with at least one input, no ref, resource or variant values in or out (reads of variables,
queues, datasets and iterators have state behind them), nothing fetched
directly (two fetches would otherwise return one array object), and a few
stateless ops that still touch the world outside the graph. A kernel that was
built to overwrite an input it owned is rebuilt without that right when the
input gains readers (compiled_schedule._entries).

Timed steps (step stats, the first profiled runs) keep every node, so traces
list the same nodes as the dataflow executor's.
"""
import numpy as np

from ..framework import dtypes, registry
from ..framework.registry import SYNC

# stateless by their op declarations, but their value depends on more than their inputs
_NOT_SHARED = frozenset(("PyFuncStateless", "ReadFile", "MatchingFiles", "Snapshot"))
_OPAQUE = (dtypes.resource, dtypes.variant)
_SMALL_CONST_BYTES = 4096  # larger constants are rarely duplicated and costly to compare


def eliminate(plan, reg_of):
    """`plan` ((node, input registers) in run order) without the nodes whose
    value an earlier node already computes, their readers reading that node's
    registers instead; None when no node is shared."""
    alias = {}
    first = {}
    fetched = {r for it, ins in plan if it.op == "_Retval" for r in ins}
    # an array handed over whole to another device, which may overwrite it: it must keep one reader
    handed_over = {r for it, ins in plan if it.op == "_Send" and it.node.attrs.get("_sole_reference") for r in ins}
    kept = []
    for it, ins in plan:
        if alias:
            ins = tuple(alias.get(r, r) for r in ins)
        key = _key(it, ins) if ins else (_const_key(it) if it.op == "Const" else None)
        if key is not None:
            same = first.get(key)
            if same is None:
                first[key] = it
            elif not any(reg_of[(it.id, k)] in fetched or reg_of[(it.id, k)] in handed_over
                         or reg_of[(same.id, k)] in handed_over for k in range(it.n_out)):
                for k in range(it.n_out):
                    alias[reg_of[(it.id, k)]] = reg_of[(same.id, k)]
                continue
        kept.append((it, ins))
    return kept if alias else None


def _key(it, ins):
    """What makes `it`'s value, or None for a node that is never shared."""
    if it.kind != SYNC or it.deref or it.op in _NOT_SHARED:
        return None
    op_def = registry.get_op_def(it.op)
    if op_def.is_stateful:
        return None
    ctx = it.ctx
    for dt in (*ctx.input_dtypes, *ctx.output_dtypes):
        if dt.is_ref_dtype or dt.base_dtype in _OPAQUE:
            return None
    try:
        attrs = tuple(sorted((name, _hashable(v)) for name, v in it.node.attrs.items()))
        key = (it.op, ins, tuple(sorted(i for i in it.node.input if i.startswith("^"))), attrs)
        hash(key)
    except TypeError:  # an attr value that cannot be compared cheaply (a tensor, a function)
        return None
    return key


def _const_key(it):
    """Equal small constants are one (TF's CSE compares their tensors too)."""
    if it.kind != SYNC:
        return None
    value = np.asarray(it.node.attrs.get("value"))
    if value.dtype.hasobject or value.nbytes > _SMALL_CONST_BYTES:
        return None
    return ("Const", value.dtype.str, value.shape, value.tobytes(), str(it.node.attrs.get("dtype")),
            tuple(sorted(i for i in it.node.input if i.startswith("^"))))


def _hashable(v):
    # the type too: 1, 1.0 and True are equal in Python but not as attrs
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_hashable(x) for x in v))
    return (type(v).__name__, v)
