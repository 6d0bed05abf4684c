"""Checks a set of partitions before the first step runs:

* every `_Recv` has exactly one `_Send` with the same key (send device,
  incarnation, recv device, tensor name) and the same dtype, and every
  `_Send` has exactly one `_Recv`;
* the partitions joined by their transfers form no cycle, which would
  deadlock (each side waiting for the other's Send). A while loop's back
  edge (NextIteration -> Merge) is not a cycle: it feeds the next iteration.

A violation is an InternalError that names both ends.
"""
import collections

from .. import errors
from ..framework.op_categories import NEXT_ITERATION_OPS, RECV_OPS, SEND_OPS


def _key(node):
    a = node.attrs
    return (a.get("send_device"), int(a.get("send_device_incarnation", 0)), a.get("recv_device"),
            a.get("tensor_name"))


def _describe(loc, node):
    return f"{node.op} '{node.name}' on {node.device or loc}"


def verify_partitions(partitions):
    """Raises InternalError if the Send/Recv pairs don't match or could deadlock."""
    sends, recvs = collections.defaultdict(list), collections.defaultdict(list)
    for loc, gd in partitions.items():
        for node in gd.node:
            if node.attrs.get("client_terminated"):
                continue
            if node.op in SEND_OPS:
                sends[_key(node)].append((loc, node))
            elif node.op in RECV_OPS:
                recvs[_key(node)].append((loc, node))
    for key, rs in recvs.items():
        ss = sends.get(key, [])
        key_text = f"{key[0]} -> {key[2]} '{key[3]}'"
        if len(rs) > 1:
            raise errors.InternalError(f"Two _Recv nodes for the key {key_text}: "
                                       f"{_describe(*rs[0])} and {_describe(*rs[1])}")
        if not ss:
            raise errors.InternalError(f"{_describe(*rs[0])} waits for {key_text}, which no _Send produces")
        if len(ss) > 1:
            raise errors.InternalError(f"Two _Send nodes for the key {key_text}: "
                                       f"{_describe(*ss[0])} and {_describe(*ss[1])}")
        (sloc, send), (rloc, recv) = ss[0], rs[0]
        if send.attrs.get("T") != recv.attrs.get("tensor_type"):
            raise errors.InternalError(
                f"dtype mismatch on {key_text}: {_describe(sloc, send)} sends {send.attrs.get('T')}, "
                f"{_describe(rloc, recv)} expects {recv.attrs.get('tensor_type')}")
    for key, ss in sends.items():
        if key not in recvs:
            raise errors.InternalError(f"{_describe(*ss[0])} sends {key[0]} -> {key[2]} '{key[3]}', "
                                       f"which no _Recv receives")
    _check_acyclic(partitions, sends, recvs)


def _check_acyclic(partitions, sends, recvs):
    """Kahn's algorithm over every node of every partition plus send->recv edges."""
    succ = collections.defaultdict(list)
    indeg = {}
    where = {}
    for loc, gd in partitions.items():
        names = {n.name for n in gd.node}
        back_edge_srcs = {n.name for n in gd.node if n.op in NEXT_ITERATION_OPS}
        for node in gd.node:
            ident = (loc, node.name)
            where[ident] = node
            indeg.setdefault(ident, 0)
            for inp in node.input:
                src = inp[1:] if inp.startswith("^") else inp.partition(":")[0]
                if src in names and src not in back_edge_srcs:
                    succ[(loc, src)].append(ident)
                    indeg[ident] = indeg.get(ident, 0) + 1
    for key, rs in recvs.items():
        for sloc, send in sends.get(key, []):
            for rloc, recv in rs:
                succ[(sloc, send.name)].append((rloc, recv.name))
                indeg[(rloc, recv.name)] = indeg.get((rloc, recv.name), 0) + 1
    ready = collections.deque(k for k, d in indeg.items() if d == 0)
    seen = 0
    while ready:
        k = ready.popleft()
        seen += 1
        for s in succ[k]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    if seen != len(indeg):
        stuck = [k for k, d in indeg.items() if d > 0]
        cycle = _find_cycle(stuck, succ)
        path = " -> ".join(f"{where[k].name} ({k[0]})" for k in cycle)
        raise errors.InternalError(f"The partitions would deadlock: their Send/Recv edges form a cycle: {path}")


def _find_cycle(stuck, succ):
    """A cycle among the stuck nodes: each has a stuck predecessor, so walking
    predecessors must revisit a node."""
    stuck_set = set(stuck)
    preds = collections.defaultdict(list)
    for src, dsts in succ.items():
        if src in stuck_set:
            for d in dsts:
                if d in stuck_set:
                    preds[d].append(src)
    path, index = [], {}
    node = stuck[0]
    while node not in index:
        index[node] = len(path)
        path.append(node)
        node = preds[node][0]
    cycle = path[index[node]:] + [node]
    return list(reversed(cycle))
