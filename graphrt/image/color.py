"""`tf.image` colour functions (TF1): HSV conversions and the hue, saturation
and gamma adjustments (their random forms), and the YIQ / YUV conversions
(a 3x3 matrix on the channel axis), as TF's image_ops_impl builds them."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor, is_tensor_like
from ..ops import array_ops, random_ops
from ..ops.extra_ops import assert_op, tensordot
from .image_ops import convert_image_dtype


def rgb_to_hsv(images, name=None):
    """[..., 3] RGB in [0, 1] to HSV, each channel in [0, 1] (float images)."""
    return apply_op("RGBToHSV", [images], name=name or "RGBToHSV").outputs[0]


def hsv_to_rgb(images, name=None):
    """[..., 3] HSV in [0, 1] to RGB."""
    return apply_op("HSVToRGB", [images], name=name or "HSVToRGB").outputs[0]


def _float_image(image):
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32):
        return image
    return convert_image_dtype(image, dtypes.float32)


def _adjust(op_type, default, image, value, name):
    with get_default_graph().name_scope(name or default):
        image = convert_to_tensor(image, name="image")
        orig = image.dtype.base_dtype
        adjusted = apply_op(op_type, [_float_image(image), convert_to_tensor(value, dtype=dtypes.float32)],
                            name=op_type).outputs[0]
        return convert_image_dtype(adjusted, orig)


def adjust_hue(image, delta, name=None):
    """Rotates the hue of RGB images by `delta` (a fraction of the colour circle, in [-1, 1])."""
    return _adjust("AdjustHue", "adjust_hue", image, delta, name)


def adjust_saturation(image, saturation_factor, name=None):
    """Scales the saturation of RGB images by `saturation_factor` (clipped to [0, 1])."""
    return _adjust("AdjustSaturation", "adjust_saturation", image, saturation_factor, name)


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma on the [0, 1] float scale, converted back with saturation."""
    with get_default_graph().name_scope("adjust_gamma"):
        image = convert_to_tensor(image, name="image")
        orig = image.dtype.base_dtype
        flt = _float_image(image)
        if is_tensor_like(gamma):
            check = assert_op(gamma >= 0, ["Gamma should be a non-negative real number."])
            with get_default_graph().control_dependencies([check]):
                gamma = array_ops.identity(gamma)
        elif not gamma >= 0:
            raise ValueError("Gamma should be a non-negative real number.")
        adjusted = gain * flt ** gamma
        return convert_image_dtype(adjusted, orig, saturate=True)


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta) (max_delta <= 0.5)."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_ops.random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_ops.random_uniform([], lower, upper, seed=seed))


# TF's matrices (image_ops_impl.py), applied as images . kernel on the last axis
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _mix(images, matrix):
    images = convert_to_tensor(images, name="images")
    kernel = convert_to_tensor(matrix, dtype=images.dtype.base_dtype, name="kernel")
    ndims = images.shape.ndims
    return tensordot(images, kernel, axes=[[ndims - 1], [0]])


def rgb_to_yiq(images):
    """RGB to YIQ (float images, [..., 3])."""
    return _mix(images, _RGB_TO_YIQ)


def yiq_to_rgb(images):
    """YIQ to RGB."""
    return _mix(images, _YIQ_TO_RGB)


def rgb_to_yuv(images):
    """RGB to YUV."""
    return _mix(images, _RGB_TO_YUV)


def yuv_to_rgb(images):
    """YUV to RGB."""
    return _mix(images, _YUV_TO_RGB)
