"""Kernels of `_Arg`/`_Retval` (the step's call frame) and `_Send`/`_Recv`
(the step's rendezvous) for host devices. The rendezvous key is built once,
when the kernel is created; only its frame:iter part changes per step.

Accelerator devices (SIM, GPU) use these same `_Send`/`_Recv` kernels: a
`_Recv` with an accelerator at either end copies what it receives into its
own device's memory (device_transfer.py), as TF copies on the receive side."""
import numpy as np

from .. import errors
from ..framework.registry import ASYNC, STEP, register_kernel
from ..ops.math_kernels import SCALAR_TYPES
from ..rendezvous import ParsedKey
from .device_transfer import device_copy_for
from .step import ROOT_FRAME_ITER

HOST_TYPES = ("CPU",)


@register_kernel("_Arg", HOST_TYPES, kind=STEP, inexpensive=True)
def _arg(ctx):
    index = ctx.attr("index")
    scalars = SCALAR_TYPES

    def arg(step):
        value = step.args[index]
        if type(value) is np.ndarray and not value.shape and value.dtype.type in scalars:
            return value[()]  # a fed 0-d value as a numpy scalar, as constants are (ops/math_kernels.SCALAR_TYPES)
        return value
    return arg


@register_kernel("_Retval", HOST_TYPES, kind=STEP, inexpensive=True)
def _retval(ctx):
    index = ctx.attr("index")

    def retval(step, value):
        step.retvals[index] = value
    return retval


def transfer_key(ctx):
    """The ParsedKey of a _Send/_Recv node (frame 0:0)."""
    a = ctx.attrs
    try:
        return ParsedKey(a["send_device"], int(a["send_device_incarnation"]) & (2 ** 64 - 1), a["recv_device"],
                         a["tensor_name"], 0, 0)
    except errors.OpError as e:
        raise errors.InvalidArgumentError(f"Bad transfer attrs on node {ctx.name}: {e}", node=ctx.name) from None


@register_kernel("_Send", HOST_TYPES, kind=STEP, inexpensive=True)
def _send(ctx):
    key = transfer_key(ctx)

    def send(step, value):
        # In a loop frame the step carries (frame_id, iter_id); a dead input
        # arrives as None and crosses as is_dead, so deadness reaches the recv.
        fi = step.frame_iter
        step.rendezvous.send(key if fi is ROOT_FRAME_ITER else key.with_frame_iter(*fi), value, value is None)
    return send


@register_kernel("_Recv", HOST_TYPES, kind=ASYNC, inexpensive=True)
def _recv(ctx):
    key = transfer_key(ctx)
    copy = device_copy_for(ctx)  # None unless an end is an accelerator (SIM, GPU)

    # A dead value is delivered as None: the executor marks that output dead. The executor's
    # `done` takes the rendezvous's (err, value, is_dead) as they come (_Run._launch).
    def recv(step, args, done):
        fi = step.frame_iter
        step.rendezvous.recv_async(key if fi is ROOT_FRAME_ITER else key.with_frame_iter(*fi), done)

    def recv_and_copy(step, args, done):
        fi = step.frame_iter
        step.rendezvous.recv_async(key if fi is ROOT_FRAME_ITER else key.with_frame_iter(*fi),
                                   lambda err, value, is_dead: done(err, None if is_dead else value)
                                   if err is not None or is_dead else copy(step, value, done))
    return recv if copy is None else recv_and_copy
