"""`tf.image` measures and filters (TF1): total_variation, psnr, ssim,
ssim_multiscale, image_gradients and sobel_edges, built from ordinary ops as
TF's image_ops_impl builds them (so their gradients are those of the ops)."""
import numpy as np

from ..depthwise.ops import depthwise_conv2d
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import constant, convert_to_tensor
from ..ops import array_ops, control_flow_ops, math_ops, nn_ops
from ..ops.extra_ops import assert_op
from .image_ops import convert_image_dtype


def total_variation(images, name=None):
    """Sum of absolute differences of neighbouring pixels: a scalar for one image, [batch] for a batch."""
    with get_default_graph().name_scope(name or "total_variation"):
        ndims = images.shape.ndims
        if ndims == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (math_ops.reduce_sum(math_ops.abs(dif1), axis=axis) +
                math_ops.reduce_sum(math_ops.abs(dif2), axis=axis))


def _compatible_shapes(img1, img2):
    """TF's _verify_compatible_image_shapes: static checks, and run-time asserts on the last three dims."""
    shape1 = img1.shape.with_rank_at_least(3)
    shape2 = img2.shape.with_rank_at_least(3)
    shape1[-3:].assert_is_compatible_with(shape2[-3:])
    if shape1.ndims is not None and shape2.ndims is not None:
        for d1, d2 in zip(reversed(shape1.as_list()[:-3]), reversed(shape2.as_list()[:-3])):
            if not (d1 == 1 or d2 == 1 or d1 is None or d2 is None or d1 == d2):
                raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    s1, s2 = array_ops.shape(img1), array_ops.shape(img2)
    checks = [assert_op(math_ops.greater_equal(array_ops.size(s1), 3), [s1, s2], summarize=10),
              assert_op(math_ops.reduce_all(math_ops.equal(s1[-3:], s2[-3:])), [s1, s2], summarize=10)]
    return s1, s2, checks


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio in dB over the last three dimensions."""
    g = get_default_graph()
    with g.name_scope(name or "PSNR"):
        max_val = math_ops.cast(max_val, a.dtype)
        max_val = convert_image_dtype(max_val, dtypes.float32)
        a = convert_image_dtype(a, dtypes.float32)
        b = convert_image_dtype(b, dtypes.float32)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        value = math_ops.subtract(20 * math_ops.log(max_val) / math_ops.log(10.0),
                                  np.float32(10 / np.log(10)) * math_ops.log(mse), name="psnr")
        _, _, checks = _compatible_shapes(a, b)
        with g.control_dependencies(checks):
            return array_ops.identity(value)


def _gauss_kernel(size, sigma):
    coords = math_ops.cast(math_ops.range(size), sigma.dtype)
    coords -= math_ops.cast(size - 1, sigma.dtype) / 2.0
    g = math_ops.square(coords)
    g *= -0.5 / math_ops.square(sigma)
    g = array_ops.reshape(g, [1, -1]) + array_ops.reshape(g, [-1, 1])
    g = nn_ops.softmax(array_ops.reshape(g, [1, -1]))
    return array_ops.reshape(g, array_ops.stack([size, size, 1, 1]))


def _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2, return_index_map=False):
    g = get_default_graph()
    size = constant(filter_size, dtype=dtypes.int32)
    sigma = constant(filter_sigma, dtype=img1.dtype.base_dtype)
    shape1, shape2 = array_ops.shape(img1), array_ops.shape(img2)
    checks = [assert_op(math_ops.reduce_all(math_ops.greater_equal(shape1[-3:-1], size)), [shape1, size],
                        summarize=8),
              assert_op(math_ops.reduce_all(math_ops.greater_equal(shape2[-3:-1], size)), [shape2, size],
                        summarize=8)]
    with g.control_dependencies(checks):
        img1 = array_ops.identity(img1)
    kernel = array_ops.tile(_gauss_kernel(size, sigma), array_ops.stack([1, 1, shape1[-1], 1]))

    def reducer(x):
        x_static = x.shape
        shape = array_ops.shape(x)
        x = array_ops.reshape(x, array_ops.concat([[-1], shape[-3:]], 0))
        y = depthwise_conv2d(x, kernel, strides=[1, 1, 1, 1], padding="VALID")
        out = array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))
        # the static shape TF's shape inference reads from the concatenated shape slices
        if x_static.ndims is not None:
            out.set_shape(x_static[:-3].concatenate(y.shape[1:]))
        return out

    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(img1 * img2) * 2.0
    den1 = reducer(math_ops.square(img1) + math_ops.square(img2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if return_index_map:
        return luminance * cs, cs
    axes = constant([-3, -2], dtype=dtypes.int32)
    return math_ops.reduce_mean(luminance * cs, axes), math_ops.reduce_mean(cs, axes)


def _prepare(img1, img2, max_val, g):
    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    _, _, checks = _compatible_shapes(img1, img2)
    with g.control_dependencies(checks):
        img1 = array_ops.identity(img1)
    max_val = convert_image_dtype(math_ops.cast(max_val, img1.dtype), dtypes.float32)
    return convert_image_dtype(img1, dtypes.float32), convert_image_dtype(img2, dtypes.float32), max_val


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity over the last three dimensions (an 11x11 Gaussian window, sigma 1.5),
    averaged over channels."""
    g = get_default_graph()
    with g.name_scope("SSIM"):
        img1, img2, max_val = _prepare(img1, img2, max_val, g)
        per_channel, _ = _ssim_per_channel(img1, img2, max_val, filter_size, filter_sigma, k1, k2,
                                           return_index_map)
        return math_ops.reduce_mean(per_channel, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01,
                    k2=0.03):
    """Multi-scale SSIM: contrast-structure terms of 2x average-pooled scales and the SSIM of the last,
    weighted by `power_factors`."""
    g = get_default_graph()
    with g.name_scope("MS-SSIM"):
        img1, img2, max_val = _prepare(img1, img2, max_val, g)
        imgs = [img1, img2]
        shapes = [array_ops.shape(img1), array_ops.shape(img2)]
        heads = [s[:-3] for s in shapes]
        tails = [s[-3:] for s in shapes]
        divisor = [1, 2, 2, 1]
        divisor_tensor = constant(divisor[1:], dtype=dtypes.int32)

        def do_pad(images, remainder):
            # TF pads the end of height and width by the remainder (0 or 1) with mode="SYMMETRIC"; graphrt
            # has no MirrorPad op, so the mirrored edge is sliced and concatenated
            out = []
            for x in images:
                shape = array_ops.shape(x)
                for axis in (1, 2):
                    r = remainder[axis - 1]
                    begin = array_ops.stack([0, shape[1] - r if axis == 1 else 0, shape[2] - r if axis == 2 else 0,
                                             0])
                    size = array_ops.stack([-1, r if axis == 1 else -1, r if axis == 2 else -1, -1])
                    x = array_ops.concat([x, array_ops.slice(x, begin, size)], axis)
                    shape = array_ops.shape(x)
                out.append(x)
            return out

        mcs = []
        for k in range(len(power_factors)):
            with g.name_scope(f"Scale{k}"):
                if k > 0:
                    flat = [array_ops.reshape(x, array_ops.concat([[-1], t], 0)) for x, t in zip(imgs, tails)]
                    remainder = tails[0] % divisor_tensor
                    need_padding = math_ops.reduce_any(math_ops.not_equal(remainder, 0))
                    padded = control_flow_ops.cond(need_padding, lambda: do_pad(flat, remainder), lambda: flat)
                    down = [nn_ops.avg_pool(x, ksize=divisor, strides=divisor, padding="VALID") for x in padded]
                    tails = [array_ops.shape(x)[1:] for x in down]
                    imgs = [array_ops.reshape(x, array_ops.concat([h, t], 0)) for x, h, t in zip(down, heads, tails)]
                per_channel, cs = _ssim_per_channel(*imgs, max_val=max_val, filter_size=filter_size,
                                                    filter_sigma=filter_sigma, k1=k1, k2=k2)
                mcs.append(nn_ops.relu(cs))
        mcs.pop()  # the last scale contributes its SSIM, not its contrast-structure term
        stacked = array_ops.stack(mcs + [nn_ops.relu(per_channel)], axis=-1)
        ms_ssim = math_ops.reduce_prod(math_ops.pow(stacked, power_factors), [-1])
        return math_ops.reduce_mean(ms_ssim, [-1])


def image_gradients(image):
    """(dy, dx): forward differences of a [batch, h, w, d] batch, zero in the last row / column."""
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    image_shape = array_ops.shape(image)
    batch, height, width, depth = array_ops.unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_ops.concat([dy, array_ops.zeros(array_ops.stack([batch, 1, width, depth]), image.dtype)], 1)
    dy = array_ops.reshape(dy, image_shape)
    dx = array_ops.concat([dx, array_ops.zeros(array_ops.stack([batch, height, 1, depth]), image.dtype)], 2)
    dx = array_ops.reshape(dx, image_shape)
    return dy, dx


_SOBEL = np.expand_dims(np.transpose(np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                                               [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]), (1, 2, 0)), -2)


def sobel_edges(image):
    """[batch, h, w, d, 2]: the vertical and horizontal Sobel responses of each channel (reflect-padded)."""
    static_shape = image.shape
    image_shape = array_ops.shape(image)
    kernels = constant(_SOBEL, dtype=image.dtype.base_dtype)
    kernels = array_ops.tile(kernels, array_ops.stack([1, 1, image_shape[-1], 1]), name="sobel_filters")
    # TF pads by one with mode="REFLECT"; graphrt has no MirrorPad op, so the reflected rows and columns
    # are concatenated
    padded = array_ops.concat([image[:, 1:2], image, image[:, -2:-1]], 1)
    padded = array_ops.concat([padded[:, :, 1:2], padded, padded[:, :, -2:-1]], 2)
    output = depthwise_conv2d(padded, kernels, [1, 1, 1, 1], "VALID")
    output = array_ops.reshape(output, array_ops.concat([image_shape, [2]], 0))
    output.set_shape(static_shape.concatenate([2]))
    return output
