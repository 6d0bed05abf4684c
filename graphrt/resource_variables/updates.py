"""The `Resource...` forms of the variable update ops: `ResourceApplyAdam` is `ApplyAdam` with
handles where the ref inputs were and no output; `ResourceScatterAdd` is `ScatterAdd` over a
handle (its value type attr named `dtype`, as TF names it). Each runs its ref form's kernel on
the handles' states, so the two forms compute the same bits."""
from ..framework import registry
from ..framework.registry import not_differentiable, register_op
from ..ops import sparse_training_ops, state_ops, training_ops  # noqa: F401 - the ref forms, registered
from ..array_extras import kernels as _array_kernels  # noqa: F401 - ScatterMul/Div/Min/Max

_SCATTERS = ("ScatterAdd", "ScatterSub", "ScatterMul", "ScatterDiv", "ScatterMin", "ScatterMax", "ScatterUpdate")


def _resource_kernel(ref_op, device_type):
    ref_factory = registry.registered_kernel_def(ref_op, device_type).factory

    def factory(ctx):
        fn = ref_factory(ctx)

        def update(*args):
            fn(*args)  # the ref form returns the updated state; the resource form has no output
        return update
    return factory


def register_resource_form(ref_op):
    """Registers `Resource<ref_op>` (op and kernels on every device type the ref form has)."""
    op_def = registry.get_op_def(ref_op)
    name = "Resource" + ref_op
    inputs, attrs = [], dict(op_def.attrs)
    scatter = ref_op in _SCATTERS
    for arg in op_def.inputs:
        if arg.is_ref:
            inputs.append(f"{arg.name}: resource")
        elif scatter and arg.type_attr == "T":
            inputs.append(f"{arg.name}: dtype")
        else:
            inputs.append(repr(arg))
    if scatter:
        attrs.pop("T", None)
        attrs.pop("use_locking", None)
    register_op(name, inputs, [], attrs=attrs, is_stateful=True, allowed_types=op_def.allowed_types,
                doc=f"{ref_op} on resource variables.")
    not_differentiable(name)
    for device_type in registry.kernel_device_types(ref_op):
        kdef = registry.registered_kernel_def(ref_op, device_type)
        if kdef is None:
            continue
        registry.register_kernel(name, (device_type,), kind=kdef.kind, host_memory=kdef.host_memory,
                                 inexpensive=kdef.inexpensive)(_resource_kernel(ref_op, device_type))


for _op in ("ApplyGradientDescent", "ApplyMomentum", "ApplyAdam", "ApplyRMSProp", "ApplyCenteredRMSProp",
            "ApplyAdagrad", "SparseApplyMomentum", "SparseApplyAdagrad", "SparseApplyRMSProp",
            "SparseApplyCenteredRMSProp") + _SCATTERS:
    register_resource_form(_op)
