"""Box kernels after TF's CPU kernels: greedy non-max suppression
(non_max_suppression_op.cc: highest score first, ties to the lower index;
a candidate is dropped when its IoU with a selected box exceeds the
threshold, or, with soft-NMS, its score decays by exp(-iou^2 / (2 sigma))
and it is queued again), CombinedNonMaxSuppression, DrawBoundingBoxes(V2)
(draw_bounding_box_op.cc) and SampleDistortedBoundingBoxV2
(sample_distorted_bounding_box_op.cc, drawing from numpy)."""
import heapq
import math

import numpy as np

from .. import errors
from ..framework.registry import register_kernel
from ..ops.random_ops import make_rng


def _iou_matrix(boxes):
    """Pairwise IoU of [n, 4] boxes given by any two opposite corners (0 where a box has no area)."""
    b = boxes.astype(np.float64)
    ymin, ymax = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    xmin, xmax = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    area = (ymax - ymin) * (xmax - xmin)
    ih = np.maximum(np.minimum(ymax[:, None], ymax[None, :]) - np.maximum(ymin[:, None], ymin[None, :]), 0)
    iw = np.maximum(np.minimum(xmax[:, None], xmax[None, :]) - np.maximum(xmin[:, None], xmin[None, :]), 0)
    inter = ih * iw
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area[:, None] + area[None, :] - inter)
    return np.where((area[:, None] > 0) & (area[None, :] > 0), iou, 0.0)


def greedy_nms(similarity, scores, max_output, threshold, score_threshold, soft_sigma=0.0):
    """Indices and scores of the selected boxes; `similarity` is an [n, n] matrix (IoU or overlaps)."""
    scale = -0.5 / soft_sigma if soft_sigma > 0 else 0.0
    queue = [(-float(s), i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(queue)
    selected, selected_scores = [], []
    while len(selected) < max_output and queue:
        neg, i, begin = heapq.heappop(queue)
        score = original = -neg
        hard = False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = similarity[i, selected[j]]
            if soft_sigma > 0:
                score *= math.exp(scale * sim * sim)
            elif sim > threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(i)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-score, i, len(selected)))
    return selected, selected_scores


def _scalar(v, what, node):
    if np.ndim(v) != 0:
        raise errors.InvalidArgumentError(f"{what} must be 0-D, got shape {list(np.shape(v))}", node=node)
    return np.asarray(v).item()


def _nms_args(boxes, scores, max_output, iou, score_threshold, node, what="boxes"):
    boxes, scores = np.asarray(boxes), np.asarray(scores)
    if boxes.ndim != 2 or (what == "boxes" and boxes.shape[1] != 4) or (
            what == "overlaps" and boxes.shape[0] != boxes.shape[1]):
        raise errors.InvalidArgumentError(f"{what} must be 2-D, got shape {list(boxes.shape)}", node=node)
    if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
        raise errors.InvalidArgumentError(f"scores has incompatible shape: {list(scores.shape)}", node=node)
    max_output = int(_scalar(max_output, "max_output_size", node))
    iou = float(_scalar(iou, "iou_threshold", node))
    if what == "boxes" and not 0 <= iou <= 1:
        raise errors.InvalidArgumentError("iou_threshold must be in [0, 1]", node=node)
    return boxes, scores, max_output, iou, float(_scalar(score_threshold, "score_threshold", node))


def _padded(values, n, dtype):
    out = np.zeros(max(n, len(values)), dtype=dtype)
    out[:len(values)] = values
    return out


@register_kernel("NonMaxSuppressionV3", ("CPU",))
def _nms_v3(ctx):
    node = ctx.name

    def kernel(boxes, scores, max_output, iou, score_threshold):
        boxes, scores, n, iou, thr = _nms_args(boxes, scores, max_output, iou, score_threshold, node)
        selected, _ = greedy_nms(_iou_matrix(boxes), scores, n, iou, thr)
        return np.asarray(selected, dtype=np.int32)
    return kernel


@register_kernel("NonMaxSuppressionV4", ("CPU",))
def _nms_v4(ctx):
    node, pad = ctx.name, bool(ctx.attr("pad_to_max_output_size"))

    def kernel(boxes, scores, max_output, iou, score_threshold):
        boxes, scores, n, iou, thr = _nms_args(boxes, scores, max_output, iou, score_threshold, node)
        selected, _ = greedy_nms(_iou_matrix(boxes), scores, n, iou, thr)
        valid = np.int32(len(selected))
        return _padded(selected, n if pad else 0, np.int32), valid
    return kernel


@register_kernel("NonMaxSuppressionV5", ("CPU",))
def _nms_v5(ctx):
    node, pad = ctx.name, bool(ctx.attr("pad_to_max_output_size"))

    def kernel(boxes, scores, max_output, iou, score_threshold, sigma):
        boxes, scores, n, iou, thr = _nms_args(boxes, scores, max_output, iou, score_threshold, node)
        sigma = float(_scalar(sigma, "soft_nms_sigma", node))
        if sigma < 0:
            raise errors.InvalidArgumentError("soft_nms_sigma_val must be non-negative", node=node)
        selected, kept = greedy_nms(_iou_matrix(boxes), scores, n, iou, thr, sigma)
        width = n if pad else 0
        return (_padded(selected, width, np.int32), _padded(kept, width, scores.dtype),
                np.int32(len(selected)))
    return kernel


@register_kernel("NonMaxSuppressionWithOverlaps", ("CPU",))
def _nms_overlaps(ctx):
    node = ctx.name

    def kernel(overlaps, scores, max_output, threshold, score_threshold):
        overlaps, scores, n, thr, s_thr = _nms_args(overlaps, scores, max_output, threshold, score_threshold, node,
                                                    "overlaps")
        selected, _ = greedy_nms(overlaps.astype(np.float64), scores, n, thr, s_thr)
        return np.asarray(selected, dtype=np.int32)
    return kernel


@register_kernel("CombinedNonMaxSuppression", ("CPU",))
def _combined_nms(ctx):
    node = ctx.name
    pad_per_class, clip = bool(ctx.attr("pad_per_class")), bool(ctx.attr("clip_boxes"))

    def kernel(boxes, scores, per_class, total, iou, score_threshold):
        boxes, scores = np.asarray(boxes), np.asarray(scores)
        if boxes.ndim != 4 or boxes.shape[3] != 4:
            raise errors.InvalidArgumentError(f"boxes must be 4-D, got shape {list(boxes.shape)}", node=node)
        if scores.ndim != 3 or scores.shape[:2] != boxes.shape[:2]:
            raise errors.InvalidArgumentError(f"scores has incompatible shape: {list(scores.shape)}", node=node)
        batch, _, q, _ = boxes.shape
        classes = scores.shape[2]
        if q not in (1, classes):
            raise errors.InvalidArgumentError("third dimension of boxes must be either 1 or num classes", node=node)
        per_class, total = int(_scalar(per_class, "max_size_per_class", node)), int(_scalar(total, "max_total_size",
                                                                                             node))
        if total <= 0:
            raise errors.InvalidArgumentError(f"max_total_size must be > 0, got {total}", node=node)
        iou, thr = float(_scalar(iou, "iou_threshold", node)), float(_scalar(score_threshold, "score_threshold",
                                                                             node))
        if not 0 <= iou <= 1:
            raise errors.InvalidArgumentError("iou_threshold must be in [0, 1]", node=node)
        size = min(total, per_class * classes) if pad_per_class else total
        out_boxes = np.zeros((batch, size, 4), np.float32)
        out_scores = np.zeros((batch, size), np.float32)
        out_classes = np.zeros((batch, size), np.float32)
        valid = np.zeros(batch, np.int32)
        for b in range(batch):
            found = []  # (score, class, box)
            for c in range(classes):
                class_boxes = boxes[b, :, c if q > 1 else 0]
                picked, kept = greedy_nms(_iou_matrix(class_boxes), scores[b, :, c], per_class, iou, thr)
                found.extend((s, c, class_boxes[i]) for i, s in zip(picked, kept))
            found.sort(key=lambda f: -f[0])
            found = found[:size]
            for k, (s, c, box) in enumerate(found):
                out_boxes[b, k] = np.clip(box, 0, 1) if clip else box
                out_scores[b, k], out_classes[b, k] = s, c
            valid[b] = len(found)
        return out_boxes, out_scores, out_classes, valid
    return kernel


# -- drawing -----------------------------------------------------------------------------------

_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1],
                    [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]], dtype=np.float32)


def draw_boxes(images, boxes, colors, node):
    if images.ndim != 4:
        raise errors.InvalidArgumentError("The rank of the images should be 4", node=node)
    batch, height, width, depth = images.shape
    if depth not in (1, 3, 4):
        raise errors.InvalidArgumentError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)", node=node)
    if boxes.ndim != 3 or boxes.shape[0] != batch or boxes.shape[2] != 4:
        raise errors.InvalidArgumentError(f"boxes must be [batch, num_boxes, 4], got {list(boxes.shape)}", node=node)
    if colors is None or colors.size == 0:
        table = _COLORS.copy()
        if depth == 1:
            table[:, 0] = 1  # gray images get white boxes
    else:
        table = colors.astype(np.float32).reshape(colors.shape[0], -1)
        if table.shape[1] < depth:
            raise errors.InvalidArgumentError("Color tensor must have at least as many channels as the image",
                                              node=node)
    canvas = images.copy()
    for b in range(batch):
        for n in range(boxes.shape[1]):
            color = table[n % len(table), :depth].astype(images.dtype)
            # TF truncates each edge towards zero to an int64 row or column
            top, left, bottom, right = (int(np.float32(boxes[b, n, k]) * np.float32(size - 1))
                                        for k, size in ((0, height), (1, width), (2, height), (3, width)))
            if top > bottom or left > right:
                continue  # inverted: not drawn
            if top >= height or bottom < 0 or left >= width or right < 0:
                continue  # entirely outside
            t, bt = max(top, 0), min(bottom, height - 1)
            lf, rt = max(left, 0), min(right, width - 1)
            if top >= 0:
                canvas[b, top, lf:rt + 1] = color
            if bottom < height:
                canvas[b, bottom, lf:rt + 1] = color
            if left >= 0:
                canvas[b, t:bt + 1, left] = color
            if right < width:
                canvas[b, t:bt + 1, right] = color
    return canvas


@register_kernel("DrawBoundingBoxes", ("CPU",), fresh_outputs=True)
def _draw_bounding_boxes(ctx):
    node = ctx.name
    return lambda images, boxes: draw_boxes(np.asarray(images), np.asarray(boxes), None, node)


@register_kernel("DrawBoundingBoxesV2", ("CPU",), fresh_outputs=True)
def _draw_bounding_boxes_v2(ctx):
    node = ctx.name
    return lambda images, boxes, colors: draw_boxes(np.asarray(images), np.asarray(boxes), np.asarray(colors), node)


# -- sampling ----------------------------------------------------------------------------------

def _random_crop(rng, width, height, min_area_frac, max_area_frac, aspect):
    """TF's GenerateRandomCrop: (x, y, w, h) of a crop of the given aspect ratio and area, or None."""
    min_area = min_area_frac * width * height
    max_area = max_area_frac * width * height
    h = int(np.rint(math.sqrt(min_area / aspect)))
    max_h = int(np.rint(math.sqrt(max_area / aspect)))
    if np.rint(max_h * aspect) > width:
        max_h = int((width + 0.5 - 1e-7) / aspect)
        if np.rint(max_h * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += int(rng.integers(0, max_h - h + 1, (), np.int64))
    w = int(np.rint(h * aspect))
    area = w * h
    if area < min_area:
        h += 1
        w = int(np.rint(h * aspect))
        area = w * h
    if area > max_area:
        h -= 1
        w = int(np.rint(h * aspect))
        area = w * h
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = int(rng.integers(0, height - h + 1, (), np.int64))
    x = int(rng.integers(0, width - w + 1, (), np.int64))
    return x, y, w, h


def _covers(crop, boxes, min_covered):
    x, y, w, h = crop
    for bx0, by0, bx1, by1 in boxes:
        area = (bx1 - bx0) * (by1 - by0)
        if area <= 0:
            continue
        inter = max(min(x + w, bx1) - max(x, bx0), 0) * max(min(y + h, by1) - max(y, by0), 0)
        if inter / area >= min_covered:
            return True
    return False


@register_kernel("SampleDistortedBoundingBoxV2", ("CPU",), host_memory=("image_size",))
def _sample_distorted_bounding_box(ctx):
    node = ctx.name
    rng = make_rng(np, ctx.attr("seed", 0), ctx.attr("seed2", 0))
    aspect_range, area_range = list(ctx.attr("aspect_ratio_range")), list(ctx.attr("area_range"))
    attempts, use_image = int(ctx.attr("max_attempts")), bool(ctx.attr("use_image_if_no_bounding_boxes"))
    dtype = ctx.output_dtypes[0].np
    if len(aspect_range) != 2 or aspect_range[0] <= 0 or aspect_range[1] <= 0:
        raise errors.InvalidArgumentError(f"aspect_ratio_range must contain 2 positive values: {aspect_range}",
                                          node=node)
    if len(area_range) != 2 or not 0 < area_range[0] <= 1 or not 0 < area_range[1] <= 1:
        raise errors.InvalidArgumentError(f"area_range must contain 2 values in (0, 1]: {area_range}", node=node)
    if attempts <= 0:
        raise errors.InvalidArgumentError(f"max_attempts must be positive: {attempts}", node=node)

    def kernel(image_size, boxes, min_covered):
        image_size, boxes = np.asarray(image_size), np.asarray(boxes, dtype=np.float64)
        if image_size.shape != (3,):
            raise errors.InvalidArgumentError(f"image_size must be 1-dimensional with 3 elements, got shape "
                                              f"{list(image_size.shape)}", node=node)
        if boxes.ndim != 3 or boxes.shape[2] != 4:
            raise errors.InvalidArgumentError(f"input boxes must be 3-dimensional [batch, num_boxes, coords]: "
                                              f"{list(boxes.shape)}", node=node)
        min_covered = float(_scalar(min_covered, "min_object_covered", node))
        if min_covered < 0:
            raise errors.InvalidArgumentError(f"min_object_covered must be non-negative: {min_covered}", node=node)
        height, width = int(image_size[0]), int(image_size[1])
        if height <= 0 or width <= 0:
            raise errors.InvalidArgumentError(f"image height and width must be positive: {height}, {width}",
                                              node=node)
        flat = boxes.reshape(-1, 4)
        if np.any((flat < 0) | (flat > 1)):
            raise errors.InvalidArgumentError("All bounding box coordinates must be in [0.0, 1.0]", node=node)
        if np.any(flat[:, 0] >= flat[:, 2]) or np.any(flat[:, 1] >= flat[:, 3]):
            raise errors.InvalidArgumentError("All bounding boxes must have ymin < ymax and xmin < xmax", node=node)
        regions = [(int(b[1] * width), int(b[0] * height), int(b[3] * width), int(b[2] * height)) for b in flat]
        if not regions:
            if not use_image:
                raise errors.InvalidArgumentError(
                    "No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes if you "
                    "wish to not provide any bounding boxes.", node=node)
            regions = [(0, 0, width, height)]
        crop = None
        for _ in range(attempts):
            aspect = float(rng.uniform((), np.dtype(np.float32))) * (aspect_range[1] - aspect_range[0]) + \
                aspect_range[0]
            candidate = _random_crop(rng, width, height, area_range[0], area_range[1], aspect)
            if candidate is not None and _covers(candidate, regions, min_covered):
                crop = candidate
                break
        x, y, w, h = crop if crop is not None else (0, 0, width, height)
        bboxes = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], dtype=np.float32)
        return (np.array([y, x, 0], dtype=dtype), np.array([h, w, -1], dtype=dtype), bboxes)
    return kernel
