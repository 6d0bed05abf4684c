"""Graph functions: a graph body with typed arguments and results, held in
a `func` attr of the ops that call it (tf.data transformations, Defun calls).

A body is built in a `FuncGraph` while it is the default graph. A tensor of
an enclosing graph used in the body is *captured*: it becomes a placeholder
of the body and an extra argument after the declared ones, and the caller
passes its value (TF's FuncGraph captures). `FuncGraph.to_function_def()`
turns the body into a `FunctionDef`: the body's NodeDefs with `_Arg` nodes
for the arguments and `_Retval` nodes for the results, which the runtime
runs like any partition (runtime/functions.py). A FunctionDef is plain data
(it serializes with the GraphDef that holds it), so a function runs wherever
its calling op is placed, remote workers included.
"""
import itertools

from . import dtypes as dtypes_lib
from . import registry
from .graph import Graph, Operation
from .tensor_shape import as_shape

_ids = itertools.count()


class FunctionDef:
    """A function: `name`, argument and result dtypes, result shapes, and the
    body's NodeDefs (with `_Arg`/`_Retval`). Immutable once made."""

    def __init__(self, name, input_types, output_types, output_shapes, node, num_captures=0):
        self.name = name
        self.input_types = list(input_types)
        self.output_types = list(output_types)
        self.output_shapes = [as_shape(s) for s in output_shapes]
        self.node = list(node)
        self.num_captures = num_captures  # the last `num_captures` inputs are captured tensors
        self.graph = None  # the FuncGraph it came from (in this process; gradients use it)

    def to_dict(self):
        from .graph_def import encode_attr
        return {"name": self.name, "input_types": [t.name for t in self.input_types],
                "output_types": [t.name for t in self.output_types],
                "output_shapes": [encode_attr(s) for s in self.output_shapes],
                "num_captures": self.num_captures, "node": [n.to_dict() for n in self.node]}

    @classmethod
    def from_dict(cls, d):
        from .graph_def import NodeDef, decode_attr
        return cls(d["name"], [dtypes_lib.as_dtype(t) for t in d["input_types"]],
                   [dtypes_lib.as_dtype(t) for t in d["output_types"]],
                   [decode_attr(s) for s in d["output_shapes"]], [NodeDef.from_dict(n) for n in d["node"]],
                   int(d.get("num_captures", 0)))

    def __eq__(self, other):
        return isinstance(other, FunctionDef) and self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        ins = ", ".join(t.name for t in self.input_types)
        outs = ", ".join(t.name for t in self.output_types)
        return f"<FunctionDef {self.name}({ins}) -> ({outs}), {len(self.node)} nodes>"

    def __str__(self):
        lines = [repr(self)]
        lines.extend(f"  {n}" for n in self.node)
        return "\n".join(lines)


class FuncGraph(Graph):
    """The body of a function being built. Ops created while it is the default
    graph land here; tensors of the graphs it is nested in are captured."""

    def __init__(self, name, outer_graph):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.seed = outer_graph.seed  # random ops in the body follow the graph-level seed, as tf.data's do
        self.inputs = []    # placeholders of the declared arguments
        self.outputs = []   # result tensors
        self._captures = {}  # id(outer tensor) -> (outer tensor, placeholder)

    @property
    def outer_graphs(self):
        """The graphs this body may capture from, innermost first."""
        out, g = [], self.outer_graph
        while g is not None:
            out.append(g)
            g = getattr(g, "outer_graph", None)
        return tuple(out)

    @property
    def captures(self):
        """[(outer tensor, placeholder in this body)] in capture order."""
        return list(self._captures.values())

    def add_input(self, dtype, shape, name="arg"):
        t = self._placeholder(dtype, shape, name)
        self.inputs.append(t)
        return t

    def _placeholder(self, dtype, shape, name):
        op = self.create_op("Placeholder", [], {"dtype": dtypes_lib.as_dtype(dtype).base_dtype,
                                                "shape": as_shape(shape)}, name=name)
        return op.outputs[0]

    def capture(self, tensor):
        """The placeholder standing for outer `tensor` in this body (made on first use)."""
        entry = self._captures.get(id(tensor))
        if entry is None:
            if tensor.dtype.base_dtype in (dtypes_lib.resource,):
                raise ValueError(f"A function cannot capture the resource tensor {tensor.name}: it lives on "
                                 f"its device for one step.")
            with self.control_dependencies(None), self.name_scope(None):
                placeholder = self._placeholder(tensor.dtype.base_dtype, tensor.shape, "capture")
            entry = self._captures[id(tensor)] = (tensor, placeholder)
        return entry[1]

    def create_op(self, op_type, inputs, attrs=None, name=None, control_inputs=(), output_dtypes=None):
        inputs = [t if t.graph is self else self.capture(t) for t in inputs]
        control_inputs = [c for c in control_inputs if isinstance(c, Operation) and c.graph is self]
        return super().create_op(op_type, inputs, attrs, name, control_inputs, output_dtypes)

    def to_function_def(self, outputs):
        """The FunctionDef of this body returning `outputs` (tensors of this body or captured)."""
        from .graph_def import NodeDef
        outputs = [t if t.graph is self else self.capture(t) for t in outputs]
        self.outputs = outputs
        args = self.inputs + [p for _, p in self.captures]
        arg_index = {t.op.name: i for i, t in enumerate(args)}
        nodes = []
        for op in self.get_operations():
            node = op.node_def
            node.device = ""
            if op.name in arg_index:
                node = NodeDef(op.name, "_Arg", [], "", {"T": op.outputs[0].dtype, "index": arg_index[op.name]})
            nodes.append(node)
        for i, t in enumerate(outputs):
            src = t
            nodes.append(NodeDef(f"_retval_{i}", "_Retval", [src._as_node_def_input()], "",
                                 {"T": src.dtype.base_dtype, "index": i}))
        fdef = FunctionDef(self.name, [t.dtype.base_dtype for t in args],
                           [t.dtype.base_dtype for t in outputs], [t.shape for t in outputs], nodes,
                           num_captures=len(self.captures))
        fdef.graph = self
        return fdef


def unique_function_name(base):
    """A process-unique function name built from `base` (TF appends a hash; a counter does here)."""
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in base) or "fn"
    return f"{clean}_{next(_ids)}"


def is_function_def(value):
    return isinstance(value, FunctionDef)



# -- calling functions from a graph (TF1's Defun) ------------------------------------------------

def _call_shapes(ctx):
    return list(ctx.attr("f").output_shapes)


for _call_op, _stateful in (("PartitionedCall", False), ("StatefulPartitionedCall", True)):
    registry.register_op(_call_op, ["args: Tin"], ["output: Tout"],
                         attrs={"Tin": [], "Tout": [], "f": registry.REQUIRED, "config": "", "config_proto": "",
                                "executor_type": ""},
                         shape_fn=_call_shapes, is_stateful=_stateful)


def call_function(fdef, args, name=None):
    """Adds an op calling `fdef` on `args` (declared arguments, then captures);
    returns its Operation. The op is stateful when the body has a stateful op."""
    from .graph import graph_of
    stateful = any(registry.get_op_def(n.op).is_stateful for n in fdef.node if n.op not in ("_Arg", "_Retval"))
    op_type = "StatefulPartitionedCall" if stateful else "PartitionedCall"
    g = graph_of(args)
    with g.as_default(), g.name_scope(name or fdef.name) as scope:
        return g.create_op(op_type, list(args), {"Tin": [t.dtype.base_dtype for t in args],
                                                 "Tout": list(fdef.output_types), "f": fdef}, name=scope)


class _DefinedFunction:
    """A Python function made a graph function on first call (per input dtypes when
    Defun was given none). Calling it adds a call op to the default graph."""

    def __init__(self, func, input_types, func_name=None, grad_func=None, python_grad_func=None,
                 out_names=None, shape_func=None):
        self._func = func
        self._input_types = [dtypes_lib.as_dtype(t) for t in input_types] if input_types else None
        self._name = func_name or getattr(func, "__name__", "fn")
        self._grad_func = grad_func
        self._python_grad_func = python_grad_func
        self._shape_func = shape_func
        self._instances = {}

    @property
    def name(self):
        return self._name

    @property
    def python_grad_func(self):
        return self._python_grad_func

    def definition(self, input_types=None, graph=None):
        """The FunctionDef for `input_types` (built once per types and outer graph)."""
        from .graph import get_default_graph
        types = tuple(input_types or self._input_types or ())
        graph = graph or get_default_graph()
        key = (types, id(graph))
        fdef = self._instances.get(key)
        if fdef is None:
            body = FuncGraph(unique_function_name(self._name), graph)
            with body.as_default():
                args = [body.add_input(t, None, name=f"arg{i}") for i, t in enumerate(types)]
                ret = self._func(*args)
            from .op_builder import convert_to_tensor
            if ret is None:
                outputs = []
            elif isinstance(ret, (list, tuple)):
                outputs = [convert_to_tensor(r) for r in ret]
            else:
                outputs = [convert_to_tensor(ret)]
            with body.as_default():
                outputs = [t if t.graph is body else body.capture(t) for t in outputs]
            fdef = body.to_function_def(outputs)
            fdef.defined = self
            self._instances[key] = fdef
        return fdef

    def __call__(self, *args, name=None):
        from .graph import graph_of
        from .op_builder import convert_to_tensor
        if self._input_types is not None and len(args) != len(self._input_types):
            raise ValueError(f"Function {self._name} takes {len(self._input_types)} argument(s), got {len(args)}")
        graph = graph_of(args)
        with graph.as_default():
            tensors = [convert_to_tensor(a, dtype=t) for a, t in
                       zip(args, self._input_types or [None] * len(args))]
        fdef = self.definition([t.dtype.base_dtype for t in tensors], graph)
        captured = [outer for outer, _ in fdef.graph.captures]
        op = call_function(fdef, tensors + captured, name=name or self._name)
        outputs = op.outputs
        if self._shape_func is not None:
            for t, shape in zip(outputs, self._shape_func(op)):
                t.set_shape(shape)
        if not outputs:
            return op
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def __repr__(self):
        return f"<_DefinedFunction {self._name}>"


class Defun:
    """`@Defun(tf.float32, tf.float32)`: the decorated Python function becomes a graph
    function, called through a PartitionedCall op (tensorflow.python.framework.function.Defun).
    `python_grad_func(op, *grads)` or `grad_func` (a Defun of inputs + output gradients)
    replace the default gradient, which differentiates the body symbolically."""

    def __init__(self, *input_types, **kwargs):
        unknown = set(kwargs) - {"func_name", "grad_func", "python_grad_func", "out_names", "shape_func",
                                 "noinline", "compiled", "separate_compiled_gradients"}
        if unknown:
            raise ValueError(f"Unknown keyword arguments: {sorted(unknown)}")
        self._input_types = input_types
        self._kwargs = {k: v for k, v in kwargs.items() if k in ("func_name", "grad_func", "python_grad_func",
                                                                  "out_names", "shape_func")}

    def __call__(self, func):
        if not callable(func):
            raise ValueError(f"func {func} must be callable.")
        return _DefinedFunction(func, self._input_types, **self._kwargs)
