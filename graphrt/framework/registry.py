"""The three registries: op declarations, kernels, gradients.

An op is declared once (`register_op`): its inputs and outputs with their
types, its attrs with defaults, a shape function run when the op is
created, and whether it is stateful. Kernels are registered separately per
(op type, device type) as factories that the executor calls once when it is
built (`KernelContext` -> callable). Gradients are registered per op type
and build graph ops.

Type expressions in input/output specs:
    "x: T"          dtype from attr T (inferred from the inputs)
    "x: int32"      a fixed dtype
    "v: N * T"      a list of N tensors of type T (N an int attr)
    "ref: Ref(T)"   a reference (a variable's state), of type T_ref
"""
import re

import numpy as np

from .. import errors
from . import dtypes as dtypes_lib
from .tensor_shape import TensorShape, as_shape

REQUIRED = object()  # attr default meaning "must be given or inferred"

_ARG_RE = re.compile(r"^\s*(\w+)\s*:\s*(?:(\w+)\s*\*\s*)?(Ref\((\w+)\)|\w+)\s*$")


class ArgDef:
    """One declared input or output."""

    __slots__ = ("name", "type_attr", "fixed_type", "number_attr", "is_ref")

    def __init__(self, spec):
        m = _ARG_RE.match(spec)
        if not m:
            raise ValueError(f"bad arg spec {spec!r}")
        self.name = m.group(1)
        self.number_attr = m.group(2)
        self.is_ref = m.group(4) is not None
        type_name = m.group(4) or m.group(3)
        try:
            self.fixed_type = dtypes_lib.as_dtype(type_name)
            self.type_attr = None
        except TypeError:
            self.fixed_type = None
            self.type_attr = type_name

    def dtype(self, attrs):
        dt = self.fixed_type if self.fixed_type is not None else attrs[self.type_attr]
        return dt._as_ref() if self.is_ref else dt

    def dtypes(self, attrs):
        """The dtypes of the tensors this arg stands for: one, N of one type, or, when its
        type attr holds a list of dtypes (TF's `list(type)`), one per entry."""
        if self.type_attr is not None and isinstance(attrs.get(self.type_attr), (list, tuple)):
            return [dt._as_ref() if self.is_ref else dt for dt in attrs[self.type_attr]]
        dt = self.dtype(attrs)
        return [dt] * (attrs[self.number_attr] if self.number_attr else 1)

    def __repr__(self):
        t = self.fixed_type.name if self.fixed_type is not None else self.type_attr
        if self.is_ref:
            t = f"Ref({t})"
        return f"{self.name}: {self.number_attr + ' * ' if self.number_attr else ''}{t}"


def _float_attr(value):
    """A float attr as TF holds it: AttrValue's `f` is 32-bit, so `leaky_relu(x, 0.2)` on float64
    scales by 0.20000000298..., and `get_attr` returns that too."""
    if isinstance(value, (list, tuple)):
        return type(value)(float(np.float32(v)) for v in value)
    return float(np.float32(value))


class OpDef:
    """The device-independent contract of one op type."""

    def __init__(self, name, inputs, outputs, attrs, shape_fn, is_stateful, allowed_types, doc, may_block=False):
        self.name = name
        # Its kernel may block for an unbounded time (I/O, a Python callback): the executor records
        # it on the step while it runs, so a deadline names it and can abandon its thread.
        self.may_block = bool(may_block)
        self.inputs = [ArgDef(s) for s in inputs]
        self.outputs = [ArgDef(s) for s in outputs]
        self.attrs = dict(attrs)
        for arg in self.inputs + self.outputs:
            if arg.type_attr and arg.type_attr not in self.attrs:
                self.attrs[arg.type_attr] = REQUIRED
            if arg.number_attr and arg.number_attr not in self.attrs:
                self.attrs[arg.number_attr] = REQUIRED
        self.shape_fn = shape_fn
        self.is_stateful = is_stateful
        self.allowed_types = allowed_types or {}
        self.doc = doc

    def complete_attrs(self, attrs, node_name):
        out = dict(attrs)
        for key, default in self.attrs.items():
            if key not in out:
                if default is REQUIRED:
                    raise ValueError(f"Op '{node_name}' of type {self.name} is missing required attr '{key}'")
                out[key] = default
        for key, value in out.items():
            if isinstance(value, (float, np.floating)) or (
                    isinstance(value, (list, tuple)) and any(isinstance(v, (float, np.floating)) for v in value)):
                out[key] = _float_attr(value)
        for key, allowed in self.allowed_types.items():
            dt = out.get(key)
            if isinstance(dt, (list, tuple)):
                bad = [d for d in dt if d.base_dtype not in allowed]
                dt = bad[0] if bad else None
            if dt is not None and dt.base_dtype not in allowed:
                names = ", ".join(a.name for a in allowed)
                raise TypeError(f"Value passed to parameter '{key}' of op '{self.name}' ('{node_name}') "
                                f"has DataType {dt.base_dtype.name} not in list of allowed values: {names}")
        return out

    def output_dtypes(self, attrs, node_name=""):
        out = []
        for arg in self.outputs:
            out.extend(arg.dtypes(attrs))
        return out

    def input_dtypes(self, attrs):
        out = []
        for arg in self.inputs:
            out.extend(arg.dtypes(attrs))
        return out

    def infer_shapes(self, op):
        n = len(op._outputs)
        if self.shape_fn is None:
            return [TensorShape(None)] * n
        ctx = ShapeContext(op)
        try:
            shapes = self.shape_fn(ctx)
        except ValueError as e:
            raise ValueError(f"{e} for '{op.name}' (op: '{self.name}') with input shapes: "
                             f"{', '.join(t.shape.short() for t in op.inputs)}.") from None
        if isinstance(shapes, (TensorShape, list)) and n == 1 and not (
                isinstance(shapes, list) and shapes and isinstance(shapes[0], TensorShape)):
            shapes = [shapes]
        return [as_shape(s) for s in shapes]

    def __repr__(self):
        return f"OpDef({self.name}: ({', '.join(map(repr, self.inputs))}) -> ({', '.join(map(repr, self.outputs))}))"


class ShapeContext:
    """What a shape function sees: input shapes, dtypes, attrs, constant inputs."""

    def __init__(self, op):
        self.op = op
        self.name = op.name
        self.inputs = op.inputs

    def shape(self, i):
        return self.op.inputs[i].shape

    def dtype(self, i):
        return self.op.inputs[i].dtype

    def attr(self, name):
        return self.op._attrs[name]

    def constant(self, i):
        """The input's value if shape inference can know it at graph-build time, else None."""
        from .constant_value import inferred_value
        return inferred_value(self.op.inputs[i])

    def constant_shape(self, i):
        """The input read as a shape vector, with unknown entries as None (TF's partial shape)."""
        from .constant_value import inferred_shape
        return inferred_shape(self.op.inputs[i])

    @property
    def num_inputs(self):
        return len(self.op.inputs)


_OPS = {}


def register_op(name, inputs=(), outputs=(), attrs=None, shape_fn=None, is_stateful=False,
                allowed_types=None, doc="", may_block=False):
    if name in _OPS:
        raise ValueError(f"Op {name} registered twice")
    op_def = OpDef(name, inputs, outputs, attrs or {}, shape_fn, is_stateful, allowed_types, doc, may_block)
    _OPS[name] = op_def
    return op_def


def get_op_def(name):
    try:
        return _OPS[name]
    except KeyError:
        raise errors.NotFoundError(f"Op type not registered '{name}' in graphrt. "
                                   f"Registered ops: {len(_OPS)}") from None


def registered_ops():
    return dict(_OPS)


# -- kernels --------------------------------------------------------------------

SYNC, STEP, ASYNC = 0, 1, 2  # kernel kinds: fn(*inputs); fn(step, *inputs); fn(step, inputs, done)


class KernelDef:
    __slots__ = ("op_type", "device_type", "factory", "kind", "host_memory", "inexpensive", "fresh_outputs",
                 "host_only")

    def __init__(self, op_type, device_type, factory, kind, host_memory, inexpensive, fresh_outputs=False,
                 host_only=False):
        self.op_type = op_type
        self.device_type = device_type
        self.factory = factory
        self.kind = kind
        self.host_memory = frozenset(host_memory)
        self.inexpensive = inexpensive
        # every output is a new array nothing else references (not a view, not an input)
        self.fresh_outputs = fresh_outputs
        # runs on the host CPU device only (files, image codecs): never copied to accelerators
        self.host_only = host_only

    def __repr__(self):
        return f"<kernel {self.op_type} on {self.device_type}>"


_KERNELS = {}


def register_kernel(op_type, device_types=("CPU",), kind=SYNC, host_memory=(), inexpensive=False,
                    fresh_outputs=False, host_only=False):
    """Decorator: `factory(ctx) -> callable` for (op_type, each device type).

    `host_memory` names inputs/outputs that stay in host memory even on an
    accelerator (shapes, axes, indices read by the kernel on the host).
    `fresh_outputs` promises every output is a newly allocated array (never
    an input or a view), so a sole consumer may write into it in place (see
    KernelContext.forwardable).
    `host_only` keeps the kernel off accelerator devices (which otherwise run
    every CPU kernel): the op is placed on a CPU, as TF places file readers,
    image codecs and queues.
    """
    if isinstance(device_types, str):
        device_types = (device_types,)

    def wrap(factory):
        for dt in device_types:
            _KERNELS[(op_type, dt)] = KernelDef(op_type, dt, factory, kind, host_memory, inexpensive, fresh_outputs,
                                                host_only)
        return factory
    return wrap


# device type -> adapt(op_type) -> KernelDef or None: a device type whose kernels are made at lookup
# from other kernels (an accelerator running the CPU's numpy kernels on its streams); see
# runtime/device_kernels.kernel_adapter. The table of registered kernels itself is never rewritten.
_ADAPTERS = {}


def register_kernel_adapter(device_type, adapt):
    """Kernels of `device_type` are `adapt(op_type)` from now on (adapt decides whether a
    kernel registered for `device_type` itself wins); idempotent per device type."""
    _ADAPTERS[device_type] = adapt


def get_kernel_def(op_type, device_type):
    adapt = _ADAPTERS.get(device_type)
    if adapt is not None:
        return adapt(op_type)
    return _KERNELS.get((op_type, device_type))


def registered_kernel_def(op_type, device_type):
    """The kernel registered for (op_type, device_type), not adapted."""
    return _KERNELS.get((op_type, device_type))


def kernel_device_types(op_type):
    types = {dt for (op, dt) in _KERNELS if op == op_type}
    for dt, adapt in list(_ADAPTERS.items()):
        if adapt(op_type) is not None:
            types.add(dt)
        else:
            types.discard(dt)
    return sorted(types)


def kernel_defs(device_type):
    """{op type: KernelDef} of every kernel registered for `device_type` (not adapted)."""
    return {op: kdef for (op, dt), kdef in list(_KERNELS.items()) if dt == device_type}


# -- gradients -------------------------------------------------------------------

_GRADIENTS = {}
NO_GRADIENT = object()


def register_gradient(op_type):
    """Decorator: `fn(op, *output_grads) -> [grad per input]` (None for no gradient)."""
    def wrap(fn):
        if op_type in _GRADIENTS:
            raise KeyError(f"Registering two gradient with name '{op_type}'!")
        _GRADIENTS[op_type] = fn
        return fn
    return wrap


def not_differentiable(op_type):
    _GRADIENTS[op_type] = NO_GRADIENT


def get_gradient_function(op_type):
    return _GRADIENTS.get(op_type)


class KernelContext:
    """What a kernel factory sees, once, when an executor is built: the node,
    its attrs and dtypes, the device it runs on, and the array module (numpy,
    or cupy on a GPU) its arrays live in."""

    __slots__ = ("node", "name", "op_type", "attrs", "input_dtypes", "output_dtypes", "device", "xp",
                 "forwardable")

    def __init__(self, node, input_dtypes, output_dtypes, device, xp, forwardable=frozenset()):
        self.node = node
        self.name = node.name
        self.op_type = node.op
        self.attrs = node.attrs
        self.input_dtypes = input_dtypes
        self.output_dtypes = output_dtypes
        self.device = device
        self.xp = xp
        # Input positions whose value this node alone will ever see, produced
        # fresh by a fresh_outputs kernel: the kernel may write into them.
        self.forwardable = forwardable

    def attr(self, name, default=None):
        return self.attrs.get(name, default)

    def __repr__(self):
        return f"<KernelContext {self.name} = {self.op_type} on {getattr(self.device, 'name', self.device)}>"
