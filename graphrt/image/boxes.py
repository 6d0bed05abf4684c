"""`tf.image` box functions (TF1): the non-max-suppression family,
draw_bounding_boxes and sample_distorted_bounding_box, over the ops of
extra_ops.py."""
from ..framework import dtypes
from ..framework.graph import get_default_graph
from ..framework.op_builder import apply_op, convert_to_tensor
from ..framework.tensor_shape import TensorShape

_NEG_INF = float("-inf")


def _thresholds(iou_threshold, score_threshold, iou_name="iou_threshold"):
    iou = convert_to_tensor(iou_threshold, name=iou_name)
    score = convert_to_tensor(score_threshold, dtype=iou.dtype.base_dtype, name="score_threshold")
    return iou, score


def non_max_suppression(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=_NEG_INF, name=None):
    """Indices of at most `max_output_size` boxes, greedily by score, dropping boxes that overlap a
    kept one by IoU > `iou_threshold` or score <= `score_threshold`."""
    with get_default_graph().name_scope(name or "non_max_suppression"):
        iou, score = _thresholds(iou_threshold, score_threshold)
        return apply_op("NonMaxSuppressionV3", [boxes, scores, max_output_size, iou, score],
                        name="NonMaxSuppressionV3").outputs[0]


def non_max_suppression_with_scores(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=_NEG_INF,
                                    soft_nms_sigma=0.0, name=None):
    """(indices, scores): non_max_suppression, or Soft-NMS (scores decayed by exp(-iou^2 / (2 sigma)))
    when `soft_nms_sigma` > 0."""
    with get_default_graph().name_scope(name or "non_max_suppression_with_scores"):
        iou, score = _thresholds(iou_threshold, score_threshold)
        sigma = convert_to_tensor(soft_nms_sigma, dtype=iou.dtype.base_dtype, name="soft_nms_sigma")
        op = apply_op("NonMaxSuppressionV5", [boxes, scores, max_output_size, iou, score, sigma],
                      name="NonMaxSuppressionV5", pad_to_max_output_size=False)
        return op.outputs[0], op.outputs[1]


def non_max_suppression_overlaps(overlaps, scores, max_output_size, overlap_threshold=0.5,
                                 score_threshold=_NEG_INF, name=None):
    """non_max_suppression over a given [n, n] overlap matrix instead of IoU."""
    with get_default_graph().name_scope(name or "non_max_suppression_overlaps"):
        threshold, score = _thresholds(overlap_threshold, score_threshold, "overlap_threshold")
        return apply_op("NonMaxSuppressionWithOverlaps", [overlaps, scores, max_output_size, threshold, score],
                        name="NonMaxSuppressionWithOverlaps").outputs[0]


def non_max_suppression_padded(boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=_NEG_INF,
                               pad_to_max_output_size=False, name=None, sorted_input=False,
                               canonicalized_coordinates=False, tile_size=512):
    """(indices, number valid): non_max_suppression, the indices zero-padded to `max_output_size` with
    `pad_to_max_output_size`. One set of [num_boxes, 4] boxes (graphrt has no batched form)."""
    with get_default_graph().name_scope(name or "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        if boxes.shape.ndims is not None and boxes.shape.ndims > 2:
            if not pad_to_max_output_size:
                raise ValueError(f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for "
                                 f"batched input")
            raise NotImplementedError("graphrt's non_max_suppression_padded takes one set of boxes")
        iou, score = _thresholds(iou_threshold, score_threshold)
        op = apply_op("NonMaxSuppressionV4", [boxes, scores, max_output_size, iou, score],
                      name="NonMaxSuppressionV4", pad_to_max_output_size=True)
        indices, valid = op.outputs
        if not pad_to_max_output_size:
            # TF counts the valid boxes in a while loop, which shape inference never evaluates: the
            # slice's length stays unknown here too, however constant the boxes
            end = apply_op("PlaceholderWithDefault", [valid], name="num_valid", dtype=dtypes.int32,
                           shape=TensorShape([])).outputs[0]
            indices = indices[:end]
        return indices, valid


def combined_non_max_suppression(boxes, scores, max_output_size_per_class, max_total_size, iou_threshold=0.5,
                                 score_threshold=_NEG_INF, pad_per_class=False, clip_boxes=True, name=None):
    """Per-class non_max_suppression of a batch, merged by score: (boxes, scores, classes, valid count)."""
    with get_default_graph().name_scope(name or "combined_non_max_suppression"):
        iou = convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold")
        score = convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")
        total = convert_to_tensor(max_total_size)
        return tuple(apply_op("CombinedNonMaxSuppression", [boxes, scores, max_output_size_per_class, total, iou,
                                                            score],
                              name="CombinedNonMaxSuppression", pad_per_class=bool(pad_per_class),
                              clip_boxes=bool(clip_boxes)).outputs)


def draw_bounding_boxes(images, boxes, name=None, colors=None):
    """Draws the outline of each [y1, x1, y2, x2] box (normalized) on float images, cycling colours."""
    if colors is None:
        return apply_op("DrawBoundingBoxes", [images, boxes], name=name or "DrawBoundingBoxes").outputs[0]
    return apply_op("DrawBoundingBoxesV2", [images, boxes, convert_to_tensor(colors, dtype=dtypes.float32)],
                    name=name or "DrawBoundingBoxesV2").outputs[0]


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=None, seed2=None, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """(begin, size, bboxes) of a random crop that covers at least `min_object_covered` of one of the
    boxes, within the aspect-ratio and area ranges (the whole image when no attempt succeeds)."""
    attrs = {"seed": int(seed or 0), "seed2": int(seed2 or 0)}
    if aspect_ratio_range is not None:
        attrs["aspect_ratio_range"] = [float(v) for v in aspect_ratio_range]
    if area_range is not None:
        attrs["area_range"] = [float(v) for v in area_range]
    if max_attempts is not None:
        attrs["max_attempts"] = int(max_attempts)
    if use_image_if_no_bounding_boxes is not None:
        attrs["use_image_if_no_bounding_boxes"] = bool(use_image_if_no_bounding_boxes)
    with get_default_graph().name_scope(name or "sample_distorted_bounding_box"):
        covered = convert_to_tensor(min_object_covered, dtype=dtypes.float32, name="min_object_covered")
        return tuple(apply_op("SampleDistortedBoundingBoxV2", [image_size, bounding_boxes, covered],
                              name=name or "SampleDistortedBoundingBoxV2", **attrs).outputs)
