"""Placement and partitioning: pure functions from a graph to per-device graphs."""
from .partitioner import Partitions, Transfer, partition  # noqa: F401
from .placer import Placement, place  # noqa: F401
from .plan import Plan, build_plan  # noqa: F401
from .subgraph import ClientGraph, build_client_graph  # noqa: F401
from .verifier import verify_partitions  # noqa: F401
from .views import PartitionView, inspect  # noqa: F401
