"""One plan pipeline: prune -> place -> partition -> verify, for every session kind.

`build_plan` is the only place these steps are chained: the local session
backend, the master (whose workers each get their devices' partitions) and
`partition.inspect` call it, and differ only in its arguments. What it
returns is pure data (no executors, no devices' state):

    plan = build_plan(graph, feeds=[x], fetches=[b], targets=[], devices=devices)
    plan.placement["b"]            # '/job:localhost/replica:0/task:0/device:CPU:1'
    plan.placement.reasons["b"]    # why it is there
    plan.partitions                # device -> GraphDef
    plan.transfer_keys()           # [(Transfer, rendezvous key at frame 0:0)]
"""
from ..framework.device_spec import canonical_name
from ..framework.graph_def import GraphDef
from ..framework.rendezvous_key import format_key
from .partitioner import new_name_counter, partition
from .placer import place
from .subgraph import build_client_graph
from .verifier import verify_partitions


class Plan:
    """A graph made runnable on `devices`: what runs where and what crosses between them."""

    __slots__ = ("client_graph", "graph_def", "placement", "partitions", "incarnations")

    def __init__(self, client_graph, graph_def, placement, partitions, incarnations):
        self.client_graph = client_graph   # subgraph.ClientGraph, or None for a whole GraphDef
        self.graph_def = graph_def          # what was placed: the pruned client graph
        self.placement = placement          # placer.Placement: node -> device, with .reasons
        self.partitions = partitions        # partitioner.Partitions: location -> GraphDef, .transfers
        self.incarnations = incarnations    # device name -> incarnation (the keys' source incarnations)

    @property
    def transfers(self):
        return self.partitions.transfers

    def key_of(self, transfer):
        """The rendezvous key of a transfer (frame 0, iteration 0)."""
        return format_key(canonical_name(transfer.send_device), self.incarnations.get(transfer.send_device, 0),
                          canonical_name(transfer.recv_device), transfer.tensor_name)

    def transfer_keys(self):
        return [(t, self.key_of(t)) for t in self.transfers]

    def __repr__(self):
        return (f"<Plan {len(self.graph_def.node)} nodes on {len(set(self.placement.values()))} devices, "
                f"{len(self.partitions)} partitions, {len(self.transfers)} transfers>")


def build_plan(graph, feeds, fetches, targets, devices, client_device=None, *, convention="function",
               allow_soft_placement=False, log_device_placement=False, default_task=None, new_name=None):
    """The verified Plan of running `fetches` and `targets` of `graph` with `feeds` fed, on `devices`.

    `graph` is a Graph (pruned to what the fetches need, feeds and fetches
    rewritten by `convention`: 'function' for _Arg/_Retval, 'rendezvous' for
    client-terminated _Recv/_Send) or a GraphDef (placed whole). Feeds and
    fetches live on `client_device` (default: the first device).
    `default_task` is where a request that leaves the task open goes;
    `new_name` names added nodes (one counter per session keeps names
    unique across its plans)."""
    client_device = client_device or devices[0]
    if isinstance(graph, GraphDef):
        client = None
        graph_def = graph
    else:
        client = build_client_graph(graph, list(feeds), list(fetches), list(targets), client_device.name,
                                    convention=convention, client_incarnation=client_device.incarnation)
        graph_def = client.graph_def
    placement = place(graph_def, devices, allow_soft_placement, log_device_placement, default_task=default_task)
    incarnations = {d.name: d.incarnation for d in devices}
    parts = partition(graph_def, placement, incarnations, new_name or new_name_counter())
    verify_partitions(parts)
    return Plan(client, graph_def, placement, parts, incarnations)
