"""`tf.image`: image codecs over Pillow (host CPU only), resizes with TF1's
sampling rules and their gradients, dtype conversion, flips, crops and simple
adjustments. Importing this package registers the ops and kernels."""
from . import ops, codec_kernels, resize_kernels, grad  # noqa: F401
from .image_ops import (ResizeMethod, adjust_brightness, adjust_contrast, central_crop,  # noqa: F401
                        convert_image_dtype, crop_to_bounding_box, decode_gif, decode_image, decode_jpeg, decode_png,
                        encode_jpeg, encode_png, flip_left_right, flip_up_down, grayscale_to_rgb, pad_to_bounding_box,
                        per_image_standardization, random_brightness, random_contrast, random_crop,
                        random_flip_left_right, random_flip_up_down, resize_area, resize_bicubic, resize_bilinear,
                        resize_image_with_crop_or_pad, resize_images, resize_nearest_neighbor, rgb_to_grayscale)

resize = resize_images  # the TF1 alias
