"""The layering of docs/architecture.md ("Layers"), kept by a test.

Every module under graphrt/ is parsed (nothing is imported) and each of its
imports of another part of graphrt, at module level or inside a function, is
checked against MAY_IMPORT: a part may import what it lists and, through
them, everything those list. A part is a top-level package or module of
graphrt (`framework`, `runtime`, `nn`, ...). There is no exceptions list.
Besides, no two parts import each other when they are imported (imports at
module level), so `import graphrt` loads its packages without a cycle.
"""
import ast
import pathlib

import networkx
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "graphrt"

# Each part and the parts directly below it (the table of docs/architecture.md, section 2).
MAY_IMPORT = {
    "errors": set(),
    "logging": set(),
    "compat": set(),
    "gfile": {"errors"},
    # Utilities that import nothing of graphrt (crc32c), below every layer.
    "util": set(),
    "framework": {"errors", "logging", "compat", "util"},
    "ops": {"framework"},
    # gradients.py offers checkpointed gradients from recompute/, which differentiates with gradients.py.
    "gradients": {"ops", "recompute"},
    "recompute": {"gradients"},
    "partition": {"framework"},
    "rendezvous": {"framework"},
    "executor": {"errors"},
    "transfer": {"executor"},
    "runtime": {"ops", "partition", "rendezvous", "transfer", "logging"},
    # Larger TF1 APIs built from ops; they may use each other.
    "tensor_array": {"ops", "gradients"},
    "candidate_sampling": {"ops", "gradients", "embedding"},
    # embedding_lookup over shards routes ids with DynamicPartition / ParallelDynamicStitch.
    "embedding": {"ops", "partition_stitch"},
    "depthwise": {"ops", "gradients", "layers"},
    "layers": {"ops", "gradients", "depthwise", "volumetric"},
    # 3-D convolution and pooling, max pooling with argmax, morphology; its tf.layers classes subclass layers.py's.
    "volumetric": {"ops", "gradients", "layers"},
    "losses": {"ops", "gradients"},
    # Streaming metrics: compositions of ops over local variables; weights broadcast as tf.losses does.
    "metrics": {"ops", "losses", "logging"},
    "rnn": {"ops", "gradients", "tensor_array", "layers"},
    # Special functions (lgamma, igamma, erfinv, ...): ops, numpy kernels and gradients.
    "special_math": {"ops"},
    # Scatters, searchsorted, histograms, bitcast, ... : ops, kernels, gradients; setdiff1d is sparse/'s ListDiff.
    "array_extras": {"ops", "sparse"},
    "linear_algebra": {"ops", "gradients"},
    # DynamicPartition, DynamicStitch, ParallelDynamicStitch: ops, host kernels, gradients.
    "partition_stitch": {"ops"},
    # Sparse tensors: the composite (its Session.run conversions registered in framework), ops, kernels, grads.
    "sparse": {"ops", "embedding"},
    # CTC loss, decoders and edit distance: ops, numpy kernels, gradients; labels and paths are SparseTensors.
    "ctc": {"ops", "sparse", "functional"},
    "functional": {"ops", "gradients", "tensor_array"},
    # tf.sets: set ops over SparseTensors (sparse/'s index validation).
    "sets": {"ops", "sparse"},
    # Gamma/Poisson and stateless random ops; RandomGammaGrad uses the special functions.
    "stateless_random": {"ops", "special_math"},
    # tf.distributions: compositions of ops, special functions and random ops (Multinomial samples with map_fn).
    "distributions": {"ops", "special_math", "stateless_random", "functional"},
    # FFT ops (numpy.fft kernels, TF's gradients) and tf.signal compositions; the kaiser window uses bessel_i0e.
    "signal": {"ops", "special_math"},
    "memory_stats": {"ops"},
    # Infeed ops: their kernels use the queue a device hands them (Device.infeed()), importing nothing below ops.
    "infeed": {"ops"},
    # tf.data kernels call graph functions through runtime/functions.py (imported when a kernel is built).
    "data": {"ops", "gradients", "runtime", "records"},
    # Example protos, TFRecord files and their reader (a data_flow reader), parsing and decoder ops.
    "records": {"ops", "data_flow", "sparse"},
    # Summary ops, and the event writer (which writes a RunMetadata: client/run_metadata.py).
    "summary": {"ops", "runtime", "client"},
    # Queues are device resources whose waits end with the step (runtime's abort callbacks).
    "data_flow": {"ops", "runtime", "summary"},
    "image": {"ops", "runtime", "depthwise"},
    # String ops; tf.string_split returns a SparseTensor.
    "strings": {"ops", "sparse"},
    # Lookup tables are device resources; OOV buckets hash with strings/.
    "lookup": {"ops", "strings", "sparse"},
    # tf.feature_column: columns over sparse ops, lookup tables, string hashing and Example parse specs.
    "feature_column": {"ops", "sparse", "strings", "lookup", "records"},
    "client": {"runtime", "executor"},
    "distributed": {"client"},
    # Resource variables: handle ops and kernels over ops/'s variable storage, and the Resource forms of
    # the update ops (ScatterMul and the others of array_extras/ included).
    "resource_variables": {"ops", "array_extras"},
    # TF 2's functional While/If (their functions run through runtime/functions.py, imported when a kernel is
    # built) and TensorList ops, for imported graphs.
    "control_flow_v2": {"ops", "runtime"},
    # Fake quantization (quantization-aware training): TF's FakeQuant ops, numpy kernels, gradients.
    "quantization": {"ops"},
    "train": {"client", "gradients", "data_flow", "summary", "tensor_array", "distributed", "infeed",
              "records", "resource_variables"},
    "distribute": {"distributed", "gradients", "recompute", "train"},
    # SavedModels: meta graphs and checkpoints through train/; build_tensor_info takes SparseTensors.
    "saved_model": {"train", "sparse"},
    # The API on top: graphrt/__init__.py, nn.py, math.py, ..., cli.py, contrib/.
    **{api: {"*"} for api in ("__init__", "nn", "math", "bitwise", "framework_api", "linalg", "random", "initializers",
                              "debugging", "io", "python_io", "cli", "contrib", "framework_extras",
                              "nest", "nn_extras", "manip", "test", "app", "variable_partitioners",
                              "behavior_switches", "queue")},
}

def _part(module):
    """'graphrt.runtime.step' -> 'runtime'; 'graphrt' -> '__init__'."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_level(tree):
    """The nodes of `tree` that run when the module is imported (not the bodies of functions)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def _imports(path, root, at_import_only=False):
    """(line, imported graphrt module) of every import in the file at `path`
    (with `at_import_only`, of those made when the module is imported)."""
    rel = path.relative_to(root.parent).with_suffix("").parts
    package = list(rel[:-1])  # the package a relative import starts from (also for an __init__.py)
    out = []
    tree = ast.parse(path.read_text(), str(path))
    for node in (_module_level(tree) if at_import_only else ast.walk(tree)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                if node.module:
                    out.append((node.lineno, ".".join(base + [node.module])))
                else:  # `from .. import errors`: each name is a module
                    out.extend((node.lineno, ".".join(base + [a.name])) for a in node.names)
            elif node.module and node.module.split(".")[0] == "graphrt":
                if node.module == "graphrt":
                    out.extend((node.lineno, f"graphrt.{a.name}") for a in node.names)
                else:
                    out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "graphrt")
    return out


def _reachable(part):
    seen, todo = set(), [part]
    while todo:
        for below in MAY_IMPORT.get(todo.pop(), ()):
            if below not in seen:
                seen.add(below)
                todo.append(below)
    return seen


def layer_violations(root=ROOT):
    """{(module path, imported part): [lines]} for every import a part's layer does not allow."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        part = _part(".".join(rel.with_suffix("").parts))
        allowed = _reachable(part)
        if "*" in allowed:
            continue
        for line, module in _imports(path, root):
            target = _part(module)
            if target == part or target in allowed:
                continue
            found.setdefault((rel.as_posix(), target), []).append(line)
    return found


def import_time_cycles(root=ROOT):
    """The cycles of parts that import each other at module level, each with where it imports the next."""
    edges = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent)
        part = _part(".".join(rel.with_suffix("").parts))
        for line, module in _imports(path, root, at_import_only=True):
            target = _part(module)
            if target != part:
                edges.setdefault((part, target), f"{rel.as_posix()}:{line}")
    graph = networkx.DiGraph(list(edges))
    return [[edges[(c[i], c[(i + 1) % len(c)])] for i in range(len(c))] for c in networkx.simple_cycles(graph)]


def test_every_part_has_a_layer():
    parts = {_part(".".join(p.relative_to(ROOT.parent).with_suffix("").parts)) for p in ROOT.rglob("*.py")}
    assert parts - set(MAY_IMPORT) == set()


def test_no_import_reaches_up_a_layer():
    found = layer_violations()
    assert found == {}, "imports of a higher layer (see docs/architecture.md, Layers): " + ", ".join(
        f"{path}:{lines} imports graphrt.{part}" for (path, part), lines in sorted(found.items()))


def test_no_parts_import_each_other_at_import_time():
    assert import_time_cycles() == []


def test_an_import_time_cycle_is_found_and_one_inside_a_function_is_not(tmp_path):
    tree = tmp_path / "graphrt"
    (tree / "framework").mkdir(parents=True)
    (tree / "ops").mkdir()
    (tree / "framework" / "graph.py").write_text("from ..ops import math_ops\n")
    (tree / "ops" / "math_ops.py").write_text("def f():\n    from ..framework import graph\n")
    assert import_time_cycles(tree) == []
    (tree / "ops" / "math_ops.py").write_text("from ..framework import graph\n")
    assert import_time_cycles(tree) in ([["graphrt/framework/graph.py:1", "graphrt/ops/math_ops.py:1"]],
                                        [["graphrt/ops/math_ops.py:1", "graphrt/framework/graph.py:1"]])


@pytest.mark.parametrize("source, expected", [
    ("from ..client import session\n", ("graphrt/framework/planted.py", "client")),
    ("def f():\n    from graphrt.runtime import step\n", ("graphrt/framework/planted.py", "runtime")),
    ("import graphrt.distributed.master\n", ("graphrt/framework/planted.py", "distributed")),
    ("from .. import ops\n", ("graphrt/framework/planted.py", "ops")),
])
def test_a_planted_upward_import_is_found(tmp_path, source, expected):
    tree = tmp_path / "graphrt"
    (tree / "framework").mkdir(parents=True)
    (tree / "framework" / "planted.py").write_text(source)
    (tree / "framework" / "fine.py").write_text("from .. import errors\nfrom . import dtypes\n")
    assert layer_violations(tree) == {expected: [source.count("\n")]}
