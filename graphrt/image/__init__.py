"""`tf.image`: image codecs over Pillow (host CPU only), resizes with TF1's
sampling rules and their gradients, dtype conversion, flips, crops, colour
spaces and adjustments, crop_and_resize, non-max suppression, boxes, patches
and quality measures. Importing this package registers the ops and kernels."""
from . import ops, codec_kernels, resize_kernels, grad  # noqa: F401
from . import extra_ops, color_kernels, crop_kernels, box_kernels, patch_kernels, jpeg_bmp_kernels  # noqa: F401
from . import extra_grad  # noqa: F401
from .image_ops import (ResizeMethod, adjust_brightness, adjust_contrast, central_crop,  # noqa: F401
                        convert_image_dtype, crop_to_bounding_box, decode_gif, decode_image, decode_jpeg, decode_png,
                        encode_jpeg, encode_png, flip_left_right, flip_up_down, grayscale_to_rgb, pad_to_bounding_box,
                        per_image_standardization, random_brightness, random_contrast, random_crop,
                        random_flip_left_right, random_flip_up_down, resize_area, resize_bicubic, resize_bilinear,
                        resize_image_with_crop_or_pad, resize_images, resize_nearest_neighbor, rgb_to_grayscale)
from .color import (adjust_gamma, adjust_hue, adjust_saturation, hsv_to_rgb, random_hue,  # noqa: F401
                    random_saturation, rgb_to_hsv, rgb_to_yiq, rgb_to_yuv, yiq_to_rgb, yuv_to_rgb)
from .geometry import (crop_and_resize, extract_image_patches, extract_patches, resize_image_with_pad,  # noqa: F401
                       rot90, transpose)
from .boxes import (combined_non_max_suppression, draw_bounding_boxes, non_max_suppression,  # noqa: F401
                    non_max_suppression_overlaps, non_max_suppression_padded, non_max_suppression_with_scores,
                    sample_distorted_bounding_box)
from .glimpse import extract_glimpse  # noqa: F401
from .quality import image_gradients, psnr, sobel_edges, ssim, ssim_multiscale, total_variation  # noqa: F401
from .jpeg_bmp import decode_and_crop_jpeg, decode_bmp, extract_jpeg_shape, is_jpeg  # noqa: F401

resize = resize_images  # the TF1 aliases
resize_with_crop_or_pad = resize_image_with_crop_or_pad
transpose_image = transpose
