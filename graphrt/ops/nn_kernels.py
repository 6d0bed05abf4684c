"""Kernels of the nn ops, written against the array module `xp` (numpy on CPU
and SIM, cupy on GPU).

Convolution is im2col: a strided view of the (padded) input with one row per
output pixel and one column per (kh, kw, in-channel), copied a few images at
a time (so the block stays in cache) into a matrix multiplied by the filter
seen as a [kh*kw*in, out] matrix. The filter backprop is the same matrix
transposed times dy. The input backprop is, for unit strides, the same
correlation run on dy padded to a "full" convolution with the filter rotated
180 degrees; otherwise (or when out channels far outnumber in channels) dy
times the filter transposed gives columns that are added back onto the input
grid, one strided add per filter tap. Pooling walks the kh*kw taps of the
window, each a strided view of the whole batch. Never a Python loop over
pixels. Window geometry depends only on attrs and the input's spatial size
and is cached per size in the factory.
"""
import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from .blas import blas_kernel
from .math_kernels import blockwise_with_scalar, reusable, select
from .nn_ops import windowed_output_size

ALL_DEVICES = ("CPU", "GPU")  # SIM reuses the CPU kernels on its own memory (see runtime)


# -- activations -------------------------------------------------------------------

@register_kernel("Relu", ALL_DEVICES, fresh_outputs=True)
def _relu(ctx):
    xp = ctx.xp
    if xp is not np:
        return lambda x: xp.maximum(x, 0)

    def relu(x):
        if type(x) is not np.ndarray:
            return np.maximum(x, 0)
        out = x if in_place and reusable(x) else None
        if x.dtype.kind != "f":
            return np.maximum(x, 0, out=out)
        return blockwise_with_scalar(np.maximum, x, x.dtype.type(0), out)
    in_place = 0 in ctx.forwardable
    return relu


@register_kernel("Relu6", ALL_DEVICES)
def _relu6(ctx):
    xp = ctx.xp
    if xp is not np:
        return lambda x: xp.clip(x, 0, 6)

    def relu6(x):  # np.clip's own loop takes the slow scalar path too (see blockwise_with_scalar)
        if type(x) is not np.ndarray:
            return np.clip(x, 0, 6)
        low, high = x.dtype.type(0), x.dtype.type(6)
        return blockwise_with_scalar(np.minimum, blockwise_with_scalar(np.maximum, x, low), high)
    return relu6


@register_kernel("Elu", ALL_DEVICES)
def _elu(ctx):
    xp = ctx.xp
    where = select if xp is np else xp.where
    return lambda x: where(x < 0, xp.expm1(xp.minimum(x, 0)), x)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@register_kernel("Selu", ALL_DEVICES)
def _selu(ctx):
    xp = ctx.xp

    def selu(x):
        neg = xp.expm1(xp.minimum(x, 0))
        neg *= _SELU_ALPHA * _SELU_SCALE
        return where(x < 0, neg, x * _SELU_SCALE)
    where = select if xp is np else xp.where
    return selu


@register_kernel("Softplus", ALL_DEVICES)
def _softplus(ctx):
    xp = ctx.xp
    return lambda x: xp.logaddexp(x, 0)  # log(1 + exp(x)) without overflow


@register_kernel("Softsign", ALL_DEVICES)
def _softsign(ctx):
    xp = ctx.xp
    return lambda x: x / (1 + xp.abs(x))


@register_kernel("LeakyRelu", ALL_DEVICES)
def _leaky_relu(ctx):
    xp = ctx.xp
    alpha = float(ctx.attr("alpha"))
    if 0 <= alpha <= 1:
        return lambda x: xp.maximum(x, x * alpha)
    where = select if xp is np else xp.where
    return lambda x: where(x > 0, x, x * alpha)


def _stable_sigmoid(xp, x):
    e = xp.exp(-xp.abs(x))
    return (select if xp is np else xp.where)(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


@register_kernel("ReluGrad", ALL_DEVICES, fresh_outputs=True)
def _relu_grad(ctx):
    if 0 in ctx.forwardable and ctx.xp is np:
        def relu_grad_in_place(dy, x):
            if reusable(dy) and dy.shape == x.shape:
                return np.multiply(dy, x > 0, out=dy)
            return dy * (x > 0)
        return relu_grad_in_place
    return lambda dy, x: dy * (x > 0)


@register_kernel("Relu6Grad", ALL_DEVICES)
def _relu6_grad(ctx):
    return lambda dy, x: dy * ((x > 0) & (x < 6))


@register_kernel("EluGrad", ALL_DEVICES)
def _elu_grad(ctx):
    xp = ctx.xp
    where = select if xp is np else xp.where
    return lambda dy, y: where(y < 0, dy * (y + 1), dy)


@register_kernel("SeluGrad", ALL_DEVICES)
def _selu_grad(ctx):
    xp = ctx.xp
    where = select if xp is np else xp.where
    return lambda dy, y: where(y < 0, dy * (y + _SELU_SCALE * _SELU_ALPHA), dy * _SELU_SCALE)


@register_kernel("SoftplusGrad", ALL_DEVICES)
def _softplus_grad(ctx):
    xp = ctx.xp
    return lambda dy, x: dy * _stable_sigmoid(xp, x)


@register_kernel("SoftsignGrad", ALL_DEVICES)
def _softsign_grad(ctx):
    xp = ctx.xp

    def softsign_grad(dy, x):
        d = 1 + xp.abs(x)
        return dy / (d * d)
    return softsign_grad


@register_kernel("LeakyReluGrad", ALL_DEVICES)
def _leaky_relu_grad(ctx):
    xp = ctx.xp
    alpha = float(ctx.attr("alpha"))
    where = select if xp is np else xp.where
    return lambda dy, x: where(x > 0, dy, dy * alpha)


# -- softmax and cross-entropy --------------------------------------------------------

def _require_rank_at_least_1(x, name, what="logits"):
    if x.ndim < 1:
        raise errors.InvalidArgumentError(f"{what} must have >= 1 dimension, got {list(x.shape)}", node=name)


@register_kernel("Softmax", ALL_DEVICES)
def _softmax(ctx):
    xp = ctx.xp
    name = ctx.name

    def softmax(x):
        _require_rank_at_least_1(x, name)
        if x.size == 0:  # no classes (or no rows): nothing to normalize, as TF
            return xp.empty_like(x)
        e = x - x.max(axis=-1, keepdims=True)
        xp.exp(e, out=e)
        e /= e.sum(axis=-1, keepdims=True)
        return e
    return softmax


@register_kernel("LogSoftmax", ALL_DEVICES)
def _log_softmax(ctx):
    xp = ctx.xp
    name = ctx.name

    def log_softmax(x):
        _require_rank_at_least_1(x, name)
        if x.size == 0:
            return xp.empty_like(x)
        shifted = x - x.max(axis=-1, keepdims=True)
        shifted -= xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))
        return shifted
    return log_softmax


@register_kernel("SoftmaxCrossEntropyWithLogits", ALL_DEVICES)
def _softmax_xent(ctx):
    xp = ctx.xp
    name = ctx.name

    def xent(logits, labels):
        if logits.ndim != 2 or labels.ndim != 2:
            raise errors.InvalidArgumentError(
                f"logits and labels must be 2-D, but got shapes {list(logits.shape)} and {list(labels.shape)}",
                node=name)
        if logits.shape != labels.shape:
            try:
                shape = np.broadcast_shapes(logits.shape, labels.shape)
            except ValueError:
                raise errors.InvalidArgumentError(
                    f"logits and labels must be broadcastable: logits_size={list(logits.shape)} "
                    f"labels_size={list(labels.shape)}", node=name) from None
            logits = xp.broadcast_to(logits, shape)
        # as TF: shifted = logits - max; loss = sum(labels * (log(sum(exp(shifted))) - shifted))
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = xp.exp(shifted)
        sum_e = e.sum(axis=1, keepdims=True)
        shifted -= xp.log(sum_e)  # = log_softmax
        loss = -(labels * shifted).sum(axis=1)
        e /= sum_e
        e -= labels  # backprop = softmax - labels
        return loss, e
    return xent


@register_kernel("SparseSoftmaxCrossEntropyWithLogits", ALL_DEVICES)
def _sparse_softmax_xent(ctx):
    xp = ctx.xp
    name = ctx.name
    aranges = {}
    # numpy's ndarray.min/max/sum are Python-level wrappers around these reductions
    least, most, total = ((np.minimum.reduce, np.maximum.reduce, np.add.reduce) if xp is np else
                          (xp.min, xp.max, xp.sum))

    def sparse_xent(logits, labels):
        if logits.ndim != 2:
            raise errors.InvalidArgumentError(f"logits must be 2-D, but got shape {list(logits.shape)}", node=name)
        if labels.ndim != 1:
            raise errors.InvalidArgumentError(f"labels must be 1-D, but got shape {list(labels.shape)}", node=name)
        batch, classes = logits.shape
        if labels.shape[0] != batch:
            raise errors.InvalidArgumentError(
                f"logits and labels must have the same first dimension, got logits shape "
                f"{list(logits.shape)} and labels shape {list(labels.shape)}", node=name)
        if batch and (int(least(labels)) < 0 or int(most(labels)) >= classes):
            host = labels.get() if hasattr(labels, "get") else labels
            bad = next(int(v) for v in host if not 0 <= v < classes)
            values = " ".join(str(int(v)) for v in host)
            raise errors.InvalidArgumentError(
                f"Received a label value of {bad} which is outside the valid range of [0, {classes}).  "
                f"Label values: {values}", node=name)
        rows = aranges.get(batch)
        if rows is None:
            rows = aranges[batch] = xp.arange(batch)
        shifted = logits - most(logits, axis=1, keepdims=True)
        e = xp.exp(shifted)
        sum_e = total(e, axis=1, keepdims=True)
        loss = xp.log(sum_e[:, 0]) - shifted[rows, labels]
        e /= sum_e
        e[rows, labels] -= 1
        return loss, e
    return sparse_xent


@register_kernel("L2Loss", ALL_DEVICES)
def _l2_loss(ctx):
    xp = ctx.xp
    dt = ctx.output_dtypes[0].np

    def l2_loss(x):
        flat = x.reshape(-1)
        return xp.asarray(xp.dot(flat, flat) * 0.5, dtype=dt)
    return l2_loss


@register_kernel("BiasAdd", ALL_DEVICES, fresh_outputs=True)
def _bias_add(ctx):
    xp = ctx.xp
    name = ctx.name
    in_place = 0 in ctx.forwardable and xp is np

    def bias_add(x, b):
        if b.ndim != 1 or x.ndim < 2 or x.shape[-1] != b.shape[0]:
            raise errors.InvalidArgumentError(
                f"Must provide as many biases as the last dimension of the input tensor: "
                f"{list(b.shape)} vs. {list(x.shape)}", node=name)
        if in_place and reusable(x):
            return np.add(x, b, out=x)
        return xp.add(x, b)
    return bias_add


@register_kernel("BiasAddGrad", ALL_DEVICES)
def _bias_add_grad(ctx):
    name = ctx.name

    def bias_add_grad(dy):
        if dy.ndim < 2:
            raise errors.InvalidArgumentError(f"Input tensor must be at least 2D: {list(dy.shape)}", node=name)
        return dy.reshape(-1, dy.shape[-1]).sum(axis=0)
    return bias_add_grad


@register_kernel("InTopKV2", ALL_DEVICES, host_memory=("k",))
def _in_top_k(ctx):
    xp = ctx.xp
    name = ctx.name

    def in_top_k(predictions, targets, k):
        k = int(k)
        batch, classes = predictions.shape
        if targets.shape != (batch,):
            raise errors.InvalidArgumentError("First dimension of predictions must match length of targets",
                                              node=name)
        valid = (targets >= 0) & (targets < classes)
        t = xp.where(valid, targets, 0)
        target_pred = predictions[xp.arange(batch), t]
        # a target is in the top k if fewer than k classes have a strictly larger prediction;
        # TF cannot say (false) when any prediction of the row is not finite
        larger = (predictions > target_pred[:, None]).sum(axis=1)
        return valid & xp.isfinite(predictions).all(axis=1) & (larger < k)
    return in_top_k


@register_kernel("TopKV2", ALL_DEVICES, host_memory=("k",))
def _top_k(ctx):
    xp = ctx.xp
    name = ctx.name

    def top_k(x, k):
        k = int(k)
        if x.ndim < 1:
            raise errors.InvalidArgumentError(f"input must be >= 1-D, got shape {list(x.shape)}", node=name)
        if k < 0:
            raise errors.InvalidArgumentError(f"Need k >= 0, got {k}", node=name)
        if x.shape[-1] < k:
            raise errors.InvalidArgumentError(f"input must have at least k columns. Had {x.shape[-1]}, needed {k}",
                                              node=name)
        # stable sort of the negation: largest first, ties in index order (as TF)
        key = -x if x.dtype.kind == "f" else -(x.astype(np.int64))  # int8 -(-128) would overflow
        idx = xp.argsort(key, axis=-1, kind="stable")
        if x.dtype.kind == "f" and k > 1:
            # TF ranks NaN above everything for k > 1 (argsort puts it last): move NaNs first, stably;
            # its k == 1 path (a max) skips NaN, as argsort does
            nan_first = xp.argsort(~xp.isnan(xp.take_along_axis(x, idx, axis=-1)), axis=-1, kind="stable")
            idx = xp.take_along_axis(idx, nan_first, axis=-1)
        idx = idx[..., :k]
        return xp.take_along_axis(x, idx, axis=-1), idx.astype(np.int32)
    return top_k


# -- window geometry ---------------------------------------------------------------------

class _Windows:
    """Geometry of one (input size, kernel, stride, padding) window layout, NHWC.

    `pad` is ((top, bottom), (left, right)) on the input; `padded` the padded
    spatial size (at least as large as the windows need); `taps[i]` the slice
    tuple that picks, for filter tap i in scan order (kh, kw), the input
    element under it for every output pixel.
    """

    __slots__ = ("out_h", "out_w", "pad", "padded", "needs_pad", "taps", "crop", "tiles")

    def __init__(self, h, w, kh, kw, sh, sw, padding):
        self.out_h, top, bottom = windowed_output_size(h, kh, sh, padding)
        self.out_w, left, right = windowed_output_size(w, kw, sw, padding)
        self.pad = ((top, bottom), (left, right))
        self.padded = (max(h + top + bottom, (self.out_h - 1) * sh + kh),
                       max(w + left + right, (self.out_w - 1) * sw + kw))
        self.needs_pad = self.padded != (h, w) or top or left
        self.taps = [(slice(None), slice(i, i + sh * (self.out_h - 1) + 1, sh),
                      slice(j, j + sw * (self.out_w - 1) + 1, sw), slice(None))
                     for i in range(kh) for j in range(kw)]
        self.crop = (slice(None), slice(top, top + h), slice(left, left + w), slice(None))
        # the windows cover the input exactly once (e.g. 2x2 pooling with stride 2 on even sizes)
        self.tiles = not self.needs_pad and (kh, kw) == (sh, sw) and (self.out_h * sh, self.out_w * sw) == (h, w)


def _geometry_cache(strides, padding):
    """A per-kernel cache: (h, w[, kh, kw]) -> _Windows."""
    cache = {}
    sh, sw = int(strides[1]), int(strides[2])

    def get(h, w, kh, kw, name):
        key = (h, w, kh, kw)
        geo = cache.get(key)
        if geo is None:
            try:
                geo = _Windows(h, w, kh, kw, sh, sw, padding)
            except ValueError as e:
                raise errors.InvalidArgumentError(str(e), node=name) from None
            cache[key] = geo
        return geo
    return get


def _pad_input(xp, x, geo, fill):
    """x padded to geo.padded with `fill`, or x itself when no padding is needed."""
    if not geo.needs_pad:
        return x
    n, h, w, c = x.shape
    if fill == 0:
        out = xp.zeros((n, geo.padded[0], geo.padded[1], c), dtype=x.dtype)
    else:
        out = xp.full((n, geo.padded[0], geo.padded[1], c), fill, dtype=x.dtype)
    out[geo.crop] = x
    return out


def _windows_view(xp, xpad, out_h, out_w, kh, kw, sh, sw):
    """A read-only [N, OH, OW, KH, KW, C] view of the windows of the padded input."""
    n, _, _, c = xpad.shape
    s_n, s_h, s_w, s_c = xpad.strides
    return xp.lib.stride_tricks.as_strided(
        xpad, shape=(n, out_h, out_w, kh, kw, c),
        strides=(s_n, s_h * sh, s_w * sw, s_h, s_w, s_c))


# im2col matrices are built and multiplied a few images at a time, so each
# block stays in cache between the copy and the matmul (about 2x faster on CPU
# than one big matrix); on a GPU one block is best.
_CPU_BLOCK_BYTES = 2 << 20


def _blocks(xp, n, bytes_per_image):
    if xp is not np:
        return [(0, n)]
    b = max(1, _CPU_BLOCK_BYTES // max(1, bytes_per_image))
    return [(i, min(i + b, n)) for i in range(0, n, b)]


def _correlate(xp, xpad, f2, out_h, out_w, kh, kw, sh, sw):
    """out[n, i, j, :] = sum over the (kh, kw, c) window at (i*sh, j*sw) of xpad times f2 [kh*kw*c, o]."""
    n, _, _, c = xpad.shape
    o = f2.shape[1]
    k = kh * kw * c
    if kh == 1 and kw == 1:
        view = xpad[:, :sh * (out_h - 1) + 1:sh, :sw * (out_w - 1) + 1:sw, :]
        return xp.matmul(view.reshape(-1, c), f2).reshape(n, out_h, out_w, o)
    out = xp.empty((n, out_h, out_w, o), dtype=xpad.dtype)
    if c == 1:
        for i, j in _blocks(xp, n, out_h * out_w * k * xpad.itemsize):
            cols = _tap_major_cols(xp, xpad[i:j], out_h, out_w, kh, kw, sh, sw)
            xp.matmul(cols.T, f2, out=out[i:j].reshape(-1, o))
        return out
    win = _windows_view(xp, xpad, out_h, out_w, kh, kw, sh, sw)
    for i, j in _blocks(xp, n, out_h * out_w * k * xpad.itemsize):
        xp.matmul(win[i:j].reshape(-1, k), f2, out=out[i:j].reshape(-1, o))
    return out


def _tap_major_cols(xp, xpad, out_h, out_w, kh, kw, sh, sw):
    """Single-channel im2col, transposed: [kh*kw, N*OH*OW], one contiguous row per filter
    tap (copies long runs along W instead of kw-element pieces)."""
    n = xpad.shape[0]
    cols = xp.empty((kh * kw, n, out_h, out_w), dtype=xpad.dtype)
    t = 0
    for a in range(kh):
        for b in range(kw):
            cols[t] = xpad[:, a:a + sh * (out_h - 1) + 1:sh, b:b + sw * (out_w - 1) + 1:sw, 0]
            t += 1
    return cols.reshape(kh * kw, -1)


def _conv_attrs(ctx):
    strides = [int(s) for s in ctx.attr("strides")]
    return strides, ctx.attr("padding")


def _dilations(ctx):
    d = [int(v) for v in ctx.attr("dilations")]
    if d[0] != 1 or d[3] != 1:  # as TF: accepted when the graph is built, refused when it runs
        raise errors.InvalidArgumentError("Current implementation does not yet support dilations in the batch "
                                          "and depth dimensions.", node=ctx.name)
    return d[1], d[2]


def _dilate_filter(xp, f, dh, dw):
    """The filter with its taps spread dh rows and dw columns apart (zeros between): a dilated
    convolution is a plain one with this filter. Costs (dh * dw)x the multiplies, which only
    dilated graphs pay."""
    if dh == 1 and dw == 1:
        return f
    kh, kw, c, o = f.shape
    out = xp.zeros(((kh - 1) * dh + 1, (kw - 1) * dw + 1, c, o), dtype=f.dtype)
    out[::dh, ::dw] = f
    return out


def _check_4d(x, what, name):
    if x.ndim != 4:
        raise errors.InvalidArgumentError(f"{what} must be 4-dimensional{list(x.shape)}", node=name)


def _sizes(v, what, name):
    v = v.get() if hasattr(v, "get") else v
    flat = np.asarray(v).reshape(-1)
    if flat.shape != (4,):
        raise errors.InvalidArgumentError(f"{what} must be a 4-element vector, got shape {list(np.shape(v))}",
                                          node=name)
    dims = tuple(int(d) for d in flat)
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(f"{what} must be non-negative, got {list(dims)}", node=name)
    return dims


# -- convolution -----------------------------------------------------------------------------

@register_kernel("Conv2D", ALL_DEVICES)
@blas_kernel
def _conv2d(ctx):
    xp = ctx.xp
    name = ctx.name
    strides, padding = _conv_attrs(ctx)
    sh, sw = strides[1], strides[2]
    dh, dw = _dilations(ctx)
    geometry = _geometry_cache(strides, padding)

    def conv2d(x, f):
        _check_4d(x, "input", name)
        _check_4d(f, "filter", name)
        f = _dilate_filter(xp, f, dh, dw)
        n, h, w, c = x.shape
        kh, kw, fc, o = f.shape
        if c != fc:
            raise errors.InvalidArgumentError(f"input depth must be evenly divisible by filter depth: {c} vs {fc}",
                                              node=name)
        geo = geometry(h, w, kh, kw, name)
        xpad = _pad_input(xp, x, geo, 0)
        return _correlate(xp, xpad, f.reshape(kh * kw * c, o), geo.out_h, geo.out_w, kh, kw, sh, sw)
    return conv2d


def _check_out_backprop(dy, n, geo, o, name):
    want = (n, geo.out_h, geo.out_w, o)
    if tuple(dy.shape) != want:
        raise errors.InvalidArgumentError(
            f"Conv2DBackprop: out_backprop has shape {list(dy.shape)}, expected {list(want)}", node=name)


def _backprop_input_full_correlation(xp, f, dy, shape, geo):
    """Stride 1: the input gradient is the correlation of dy, padded to a 'full'
    convolution, with the filter rotated 180 degrees and its in/out channels swapped."""
    n, h, w, c = shape
    kh, kw, _, o = f.shape
    (top, _), (left, _) = geo.pad
    ptop, pleft = kh - 1 - top, kw - 1 - left
    dyp = xp.zeros((n, h + kh - 1, w + kw - 1, o), dtype=dy.dtype)
    dyp[:, ptop:ptop + geo.out_h, pleft:pleft + geo.out_w, :] = dy
    rot = xp.ascontiguousarray(f[::-1, ::-1].transpose(0, 1, 3, 2)).reshape(kh * kw * o, c)
    return _correlate(xp, dyp, rot, h, w, kh, kw, 1, 1)


def _backprop_input_scatter(xp, f, dy, shape, geo):
    """Any stride: columns = dy x filter^T, then each filter tap's column block is
    added back onto the input grid (one strided add per tap), a few images at a time."""
    n, h, w, c = shape
    kh, kw, _, o = f.shape
    kk = kh * kw
    ft = f.reshape(kk * c, o).T
    dx = xp.empty((n, h, w, c), dtype=dy.dtype)
    taps, crop = geo.taps, geo.crop
    for i, j in _blocks(xp, n, geo.out_h * geo.out_w * kk * c * dy.itemsize):
        cols = xp.matmul(dy[i:j].reshape(-1, o), ft).reshape(j - i, geo.out_h, geo.out_w, kk, c)
        buf = xp.zeros((j - i, geo.padded[0], geo.padded[1], c), dtype=dy.dtype)
        for t, tap in enumerate(taps):
            buf[tap] += cols[:, :, :, t, :]
        dx[i:j] = buf[crop]
    return dx


@register_kernel("Conv2DBackpropInput", ALL_DEVICES, host_memory=("input_sizes",))
@blas_kernel
def _conv2d_backprop_input(ctx):
    xp = ctx.xp
    name = ctx.name
    strides, padding = _conv_attrs(ctx)
    unit_stride = strides[1] == 1 and strides[2] == 1
    dh, dw = _dilations(ctx)
    geometry = _geometry_cache(strides, padding)

    def backprop_input(input_sizes, f, dy):
        shape = _sizes(input_sizes, "input_sizes", name)
        n, h, w, c = shape
        _check_4d(f, "filter", name)
        _check_4d(dy, "out_backprop", name)
        f = _dilate_filter(xp, f, dh, dw)
        kh, kw, fc, o = f.shape
        if fc != c:
            raise errors.InvalidArgumentError(f"Conv2DBackpropInput: input depth {c} does not match filter "
                                              f"depth {fc}", node=name)
        geo = geometry(h, w, kh, kw, name)
        _check_out_backprop(dy, n, geo, o, name)
        if kh == 1 and kw == 1 and unit_stride and not geo.needs_pad:
            return xp.matmul(dy.reshape(-1, o), f.reshape(c, o).T).reshape(n, h, w, c)
        if unit_stride and o <= 4 * c:
            # unless out channels far outnumber in channels, copying dy's windows (long runs)
            # costs less than scattering kh*kw column blocks of c-element runs (measured)
            return _backprop_input_full_correlation(xp, f, dy, shape, geo)
        return _backprop_input_scatter(xp, f, dy, shape, geo)
    return backprop_input


@register_kernel("Conv2DBackpropFilter", ALL_DEVICES, host_memory=("filter_sizes",))
@blas_kernel
def _conv2d_backprop_filter(ctx):
    xp = ctx.xp
    name = ctx.name
    strides, padding = _conv_attrs(ctx)
    sh, sw = strides[1], strides[2]
    dh, dw = _dilations(ctx)
    geometry = _geometry_cache(strides, padding)

    def backprop_filter(x, filter_sizes, dy):
        kh, kw, fc, o = _sizes(filter_sizes, "filter_sizes", name)
        if dh > 1 or dw > 1:
            # The gradient of the spread-out filter, read back at the taps that exist.
            full = dense_filter(x, ((kh - 1) * dh + 1, (kw - 1) * dw + 1, fc, o), dy)
            return xp.ascontiguousarray(full[::dh, ::dw])
        return dense_filter(x, (kh, kw, fc, o), dy)

    def dense_filter(x, sizes, dy):
        kh, kw, fc, o = sizes
        _check_4d(x, "input", name)
        _check_4d(dy, "out_backprop", name)
        n, h, w, c = x.shape
        if fc != c:
            raise errors.InvalidArgumentError(f"Conv2DBackpropFilter: input depth {c} does not match filter "
                                              f"depth {fc}", node=name)
        geo = geometry(h, w, kh, kw, name)
        _check_out_backprop(dy, n, geo, o, name)
        k = kh * kw * c
        xpad = _pad_input(xp, x, geo, 0)
        win = _windows_view(xp, xpad, geo.out_h, geo.out_w, kh, kw, sh, sw)
        df = None
        for i, j in _blocks(xp, n, geo.out_h * geo.out_w * k * x.itemsize):
            if c == 1:
                cols_t = _tap_major_cols(xp, xpad[i:j], geo.out_h, geo.out_w, kh, kw, sh, sw)
            else:
                cols_t = win[i:j].reshape(-1, k).T
            part = xp.matmul(cols_t, dy[i:j].reshape(-1, o))
            if df is None:
                df = part
            else:
                df += part
        if df is None:
            df = xp.zeros((k, o), dtype=dy.dtype)
        return df.reshape(kh, kw, c, o)
    return backprop_filter


# -- pooling --------------------------------------------------------------------------------

def _pool_attrs(ctx):
    ksize = [int(k) for k in ctx.attr("ksize")]
    strides = [int(s) for s in ctx.attr("strides")]
    return ksize[1], ksize[2], strides, ctx.attr("padding")


def _lowest(dtype):
    """TF's max pooling starts from the lowest finite value (so an all -inf window gives it)."""
    dtype = np.dtype(dtype)
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


@register_kernel("MaxPool", ALL_DEVICES)
def _max_pool(ctx):
    xp = ctx.xp
    name = ctx.name
    kh, kw, strides, padding = _pool_attrs(ctx)
    geometry = _geometry_cache(strides, padding)
    lowest = _lowest(ctx.input_dtypes[0].np)

    def max_pool(x):
        _check_4d(x, "input", name)
        geo = geometry(x.shape[1], x.shape[2], kh, kw, name)
        xpad = _pad_input(xp, x, geo, lowest)  # padding never wins the max
        taps = geo.taps
        out = xp.maximum(xpad[taps[0]], lowest)
        for tap in taps[1:]:
            xp.maximum(out, xpad[tap], out=out)
        return out
    return max_pool


def _route_to_max(xp, xpad, y, g, taps, emit):
    """Routes each output's gradient `g` to the first input of its window (row-major
    scan, TF CPU's tie rule) equal to the window max `y`: calls emit(tap, routed)
    once per tap, where routed = g where this tap is the window's first max, else 0.
    Consumes `g`."""
    m = xp.empty(y.shape, dtype=bool)
    last = len(taps) - 1
    for t, tap in enumerate(taps):
        xp.equal(xpad[tap], y, out=m)
        routed = emit(tap, g, m)
        if t < last:
            xp.subtract(g, routed, out=g)  # routed: nothing left for later taps of this window


def _for_routing(xp, x, lowest):
    """(input, padding fill) for finding window maxima in the gradients: the forward pass
    clamps at `lowest`, so -inf inputs count as `lowest` while padding stays below it."""
    if x.dtype.kind != "f":
        return x, lowest
    return xp.maximum(x, lowest), -np.inf


@register_kernel("MaxPoolGrad", ALL_DEVICES)
def _max_pool_grad(ctx):
    xp = ctx.xp
    name = ctx.name
    kh, kw, strides, padding = _pool_attrs(ctx)
    geometry = _geometry_cache(strides, padding)
    lowest = _lowest(ctx.input_dtypes[0].np)

    def max_pool_grad(x, y, dy):
        _check_4d(x, "orig_input", name)
        geo = geometry(x.shape[1], x.shape[2], kh, kw, name)
        want = (x.shape[0], geo.out_h, geo.out_w, x.shape[3])
        if tuple(y.shape) != want or tuple(dy.shape) != want:
            raise errors.InvalidArgumentError(
                f"MaxPoolGrad: orig_output {list(y.shape)} and grad {list(dy.shape)} must have the pooled "
                f"shape {list(want)}", node=name)
        xr, fill = _for_routing(xp, x, lowest)
        xpad = _pad_input(xp, xr, geo, fill)
        if geo.tiles:
            dx = xp.empty(xpad.shape, dtype=dy.dtype)  # every element is written by exactly one tap

            def emit(tap, g, m):
                out = dx[tap]
                xp.multiply(g, m, out=out)
                return out
        else:
            dx = xp.zeros(xpad.shape, dtype=dy.dtype)
            tmp = xp.empty(dy.shape, dtype=dy.dtype)

            def emit(tap, g, m):
                xp.multiply(g, m, out=tmp)
                dx[tap] += tmp
                return tmp
        _route_to_max(xp, xpad, y, dy.copy(), geo.taps, emit)
        if geo.needs_pad:
            return xp.ascontiguousarray(dx[geo.crop])
        return dx
    return max_pool_grad


@register_kernel("MaxPoolGradGrad", ALL_DEVICES)
def _max_pool_grad_grad(ctx):
    xp = ctx.xp
    name = ctx.name
    kh, kw, strides, padding = _pool_attrs(ctx)
    geometry = _geometry_cache(strides, padding)
    lowest = _lowest(ctx.input_dtypes[0].np)

    def max_pool_grad_grad(x, y, g):
        _check_4d(x, "orig_input", name)
        if g.shape != x.shape:
            raise errors.InvalidArgumentError(f"MaxPoolGradGrad: grad {list(g.shape)} must have the shape of "
                                              f"orig_input {list(x.shape)}", node=name)
        geo = geometry(x.shape[1], x.shape[2], kh, kw, name)
        x, fill = _for_routing(xp, x, lowest)
        xpad = _pad_input(xp, x, geo, fill)
        gpad = _pad_input(xp, g, geo, 0)
        out = xp.zeros(y.shape, dtype=g.dtype)
        # the first max of each window picks which input's grad the output gets
        m = xp.empty(y.shape, dtype=bool)
        free = xp.ones(y.shape, dtype=bool)
        for tap in geo.taps:
            xp.equal(xpad[tap], y, out=m)
            m &= free
            out += gpad[tap] * m
            free &= ~m
        return out
    return max_pool_grad_grad


def _avg_counts(xp, geo, h, w, kh, kw, sh, sw, dtype):
    """1 / (number of non-padding elements) of each window, as an [OH, OW, 1] array."""
    (top, _), (left, _) = geo.pad
    rows = np.arange(geo.out_h) * sh - top
    cols = np.arange(geo.out_w) * sw - left
    count_h = np.minimum(rows + kh, h) - np.maximum(rows, 0)
    count_w = np.minimum(cols + kw, w) - np.maximum(cols, 0)
    inv = 1.0 / np.outer(count_h, count_w).astype(np.float64)
    return xp.asarray(inv.astype(dtype)[:, :, None])


def _avg_scale(xp, cache, geo, h, w, kh, kw, sh, sw, dtype, padding):
    if padding == "VALID" or not geo.needs_pad:
        return 1.0 / (kh * kw)
    key = (h, w)
    scale = cache.get(key)
    if scale is None:
        scale = cache[key] = _avg_counts(xp, geo, h, w, kh, kw, sh, sw, dtype)
    return scale


@register_kernel("AvgPool", ALL_DEVICES)
def _avg_pool(ctx):
    xp = ctx.xp
    name = ctx.name
    kh, kw, strides, padding = _pool_attrs(ctx)
    sh, sw = strides[1], strides[2]
    geometry = _geometry_cache(strides, padding)
    dtype = ctx.input_dtypes[0].np
    scales = {}

    def avg_pool(x):
        _check_4d(x, "input", name)
        h, w = x.shape[1], x.shape[2]
        geo = geometry(h, w, kh, kw, name)
        xpad = _pad_input(xp, x, geo, 0)
        taps = geo.taps
        out = xpad[taps[0]].copy()
        for tap in taps[1:]:
            out += xpad[tap]
        out *= _avg_scale(xp, scales, geo, h, w, kh, kw, sh, sw, dtype, padding)
        return out
    return avg_pool


@register_kernel("AvgPoolGrad", ALL_DEVICES, host_memory=("orig_input_shape",))
def _avg_pool_grad(ctx):
    xp = ctx.xp
    name = ctx.name
    kh, kw, strides, padding = _pool_attrs(ctx)
    sh, sw = strides[1], strides[2]
    geometry = _geometry_cache(strides, padding)
    dtype = ctx.input_dtypes[1].np
    scales = {}

    def avg_pool_grad(orig_input_shape, dy):
        n, h, w, c = _sizes(orig_input_shape, "orig_input_shape", name)
        geo = geometry(h, w, kh, kw, name)
        want = (n, geo.out_h, geo.out_w, c)
        if tuple(dy.shape) != want:
            raise errors.InvalidArgumentError(f"AvgPoolGrad: grad has shape {list(dy.shape)}, expected "
                                              f"{list(want)}", node=name)
        g = dy * _avg_scale(xp, scales, geo, h, w, kh, kw, sh, sw, dtype, padding)
        if geo.tiles:
            dx = xp.empty((n, h, w, c), dtype=dy.dtype)
            for tap in geo.taps:
                dx[tap] = g
            return dx
        dx = xp.zeros((n, geo.padded[0], geo.padded[1], c), dtype=dy.dtype)
        for tap in geo.taps:
            dx[tap] += g
        if geo.needs_pad:
            return xp.ascontiguousarray(dx[geo.crop])
        return dx
    return avg_pool_grad


# -- local response normalization -------------------------------------------------------------

def _channel_window_sum(v, radius):
    """sum of v[..., d - radius : d + radius + 1] for every channel d (clipped at the ends)."""
    depth = v.shape[-1]
    c = np.cumsum(v, axis=-1)
    c = np.concatenate([np.zeros(v.shape[:-1] + (1,), v.dtype), c], axis=-1)
    hi = np.minimum(np.arange(depth) + radius + 1, depth)
    lo = np.maximum(np.arange(depth) - radius, 0)
    return c[..., hi] - c[..., lo]


def _lrn_attrs(ctx):
    return int(ctx.attr("depth_radius")), float(ctx.attr("bias")), float(ctx.attr("alpha")), float(ctx.attr("beta"))


@register_kernel("LRN", ("CPU",))
def _lrn(ctx):
    radius, bias, alpha, beta = _lrn_attrs(ctx)
    name = ctx.name

    def lrn(x):
        _check_4d(x, "input", name)
        xf = x.astype(np.float32) if x.dtype == np.float16 else x
        norm = bias + alpha * _channel_window_sum(xf * xf, radius)
        return (xf * norm ** -beta).astype(x.dtype, copy=False)
    return lrn


@register_kernel("LRNGrad", ("CPU",))
def _lrn_grad(ctx):
    radius, bias, alpha, beta = _lrn_attrs(ctx)
    name = ctx.name

    def lrn_grad(dy, x, y):
        for v, what in ((dy, "input_grads"), (x, "input_image"), (y, "output_image")):
            _check_4d(v, what, name)
        if not (dy.shape == x.shape == y.shape):
            raise errors.InvalidArgumentError(f"LRNGrad: input_grads, input_image and output_image must have the "
                                              f"same shape, got {list(dy.shape)}, {list(x.shape)}, "
                                              f"{list(y.shape)}", node=name)
        f32 = x.dtype == np.float16
        dyf, xf = (dy.astype(np.float32), x.astype(np.float32)) if f32 else (dy, x)
        norm = bias + alpha * _channel_window_sum(xf * xf, radius)
        # d out[j] / d x[d] = [j == d] norm[j]^-beta - 2 alpha beta x[d] x[j] norm[j]^(-beta-1), over the
        # channels j whose window holds d (the window is symmetric, so a window sum again).
        dx = dyf * norm ** -beta - 2 * alpha * beta * xf * _channel_window_sum(dyf * xf * norm ** (-beta - 1), radius)
        return dx.astype(x.dtype, copy=False)
    return lrn_grad
