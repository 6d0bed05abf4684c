"""While, StatelessWhile, If, StatelessIf: TF 2's functional control flow ops, run by calling their
functions (runtime/functions.py) on the op's host device. A condition's value is true as TF reads
it: a non-zero scalar, or a non-empty tensor."""
import numpy as np

from .. import errors
from ..framework.registry import STEP, not_differentiable, register_kernel, register_op
from ..framework.tensor_shape import TensorShape

MAX_ITERATIONS = 10 ** 9  # a guard against a body that never ends the loop: the step's deadline ends it sooner


def _listed_shapes(ctx, n):
    shapes = ctx.attr("output_shapes") or []
    return [TensorShape(s) for s in shapes] if len(shapes) == n else [TensorShape(None)] * n


for _name in ("While", "StatelessWhile"):
    register_op(_name, ["input: T"], ["output: T"],
                attrs={"cond": None, "body": None, "output_shapes": [], "parallel_iterations": 10},
                shape_fn=lambda ctx: _listed_shapes(ctx, len(ctx.attr("T"))), is_stateful=_name == "While",
                doc="Calls `body` on the loop values while `cond` of them is true.")
for _name in ("If", "StatelessIf"):
    register_op(_name, ["cond: Tcond", "input: Tin"], ["output: Tout"],
                attrs={"then_branch": None, "else_branch": None, "output_shapes": []},
                shape_fn=lambda ctx: _listed_shapes(ctx, len(ctx.attr("Tout"))), is_stateful=_name == "If",
                doc="Calls `then_branch` or `else_branch` on the inputs, as `cond` says.")
for _name in ("While", "StatelessWhile", "If", "StatelessIf"):
    not_differentiable(_name)


def _truth(value, name):
    value = np.asarray(value)
    if value.ndim == 0:
        item = value.item()
        return bool(item) if not isinstance(item, bytes) else bool(item)
    return value.size > 0


def _instance(ctx, attr):
    from ..runtime.functions import instantiate  # the runtime runs function bodies (imported when built)
    fdef = ctx.attr(attr)
    if fdef is None:
        raise errors.InvalidArgumentError(f"{ctx.op_type} {ctx.name} has no function `{attr}`", node=ctx.name)
    return instantiate(fdef, ctx.device)


def _calls_from(step):
    from ..runtime.functions import calls_from
    return calls_from(step)


def _out(values):
    return values[0] if len(values) == 1 else tuple(values)


@register_kernel("While", ("CPU",), kind=STEP, host_only=True)
@register_kernel("StatelessWhile", ("CPU",), kind=STEP, host_only=True)
def _while(ctx):
    cond, body, name = _instance(ctx, "cond"), _instance(ctx, "body"), ctx.name

    def loop(step, *values):
        values = list(values)
        with _calls_from(step):
            for _ in range(MAX_ITERATIONS):
                if not _truth(cond(values)[0], name):
                    return _out(values)
                values = list(body(values))
        raise errors.ResourceExhaustedError(f"{name}: the loop ran {MAX_ITERATIONS} iterations", node=name)
    return loop


@register_kernel("If", ("CPU",), kind=STEP, host_only=True)
@register_kernel("StatelessIf", ("CPU",), kind=STEP, host_only=True)
def _if(ctx):
    then_branch, else_branch, name = _instance(ctx, "then_branch"), _instance(ctx, "else_branch"), ctx.name

    def run(step, predicate, *args):
        with _calls_from(step):
            results = (then_branch if _truth(predicate, name) else else_branch)(list(args))
        return _out(results)
    return run
