"""Per-frame overlaps (2D image, BEV, 3D) between detections and GT, flattened frame by frame.

The BEV footprint of an annotation in the evaluator layout is (location[0], location[2],
dimensions[0], dimensions[2], rotation_y + yaw_offset) in ``rotate_iou_eval``'s (x, y, w, h, angle)
convention; with ``yaw_offset`` 0 the length lies along yaw + pi/2 (the legacy K-Radar #81 footprint),
with -pi/2 along the heading. The height interval of a box is
[z - h * z_center, z + h * (1 - z_center)] with z = location[1], h = dimensions[1]. All rotated-box
areas come from :func:`kradar_plugin.ops.rotate_iou_eval` (criterion 2, intersection area); only
frames' own detection/GT pairs are kept.
"""
import numpy as np

from kradar_plugin.ops import rotate_iou_eval

#: frames are sent to ``rotate_iou_eval`` in groups of about this many detection x GT pairs
PAIRS_PER_CALL = 4096


class FramePairs(object):
    """Index of all (detection, GT) pairs frame by frame: block ``f`` is ``nd_f x ng_f``, row-major.

    ``ov_off[f]`` is where frame ``f``'s block starts in a flat pair array; ``dt`` / ``gt`` give each
    pair's global detection / GT index.
    """

    def __init__(self, dt_off, gt_off):
        self.dt_off = np.asarray(dt_off, dtype=np.int64)
        self.gt_off = np.asarray(gt_off, dtype=np.int64)
        nd = np.diff(self.dt_off)
        ng = np.diff(self.gt_off)
        sizes = nd * ng
        self.ov_off = np.zeros(len(sizes), dtype=np.int64)
        if len(sizes):
            self.ov_off[1:] = np.cumsum(sizes)[:-1]
        self.total = int(sizes.sum()) if len(sizes) else 0
        frame = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        local = np.arange(self.total, dtype=np.int64) - self.ov_off[frame]
        ng_of = ng[frame]
        safe = np.maximum(ng_of, 1)
        self.frame = frame
        self.dt = self.dt_off[:-1][frame] + local // safe
        self.gt = self.gt_off[:-1][frame] + local % safe


def bev_footprints(location, dimensions, rotation_y, yaw_offset):
    """(N, 5) rotated rectangles (x, y, w, h, angle) for ``rotate_iou_eval``."""
    return np.stack([location[:, 0], location[:, 2], dimensions[:, 0], dimensions[:, 2],
                     rotation_y + yaw_offset], axis=1).astype(np.float64)


def intersection_areas(pairs, dt_boxes, gt_boxes):
    """BEV intersection area of every pair in ``pairs`` (flat float64)."""
    out = np.zeros(pairs.total, dtype=np.float64)
    n_frames = len(pairs.ov_off)
    nd = np.diff(pairs.dt_off)
    ng = np.diff(pairs.gt_off)
    start = 0
    while start < n_frames:
        # grow a group of consecutive frames until its all-pairs matrix reaches the budget
        stop = start
        d_sum = 0
        g_sum = 0
        while stop < n_frames and (stop == start or (d_sum + nd[stop]) * (g_sum + ng[stop]) <= PAIRS_PER_CALL):
            d_sum += nd[stop]
            g_sum += ng[stop]
            stop += 1
        if d_sum and g_sum:
            d0, d1 = pairs.dt_off[start], pairs.dt_off[stop]
            g0, g1 = pairs.gt_off[start], pairs.gt_off[stop]
            block = rotate_iou_eval(dt_boxes[d0:d1], gt_boxes[g0:g1], criterion=2)
            e0 = pairs.ov_off[start]
            e1 = pairs.ov_off[stop] if stop < n_frames else pairs.total
            out[e0:e1] = block[pairs.dt[e0:e1] - d0, pairs.gt[e0:e1] - g0]
        start = stop
    return out


def _safe_divide(num, den):
    out = np.zeros(num.shape, dtype=np.float64)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def bev_iou(pairs, inter, dt_dims, gt_dims):
    """BEV IoU of every pair from its intersection area; a box's area is w * h as in the kernel."""
    area_dt = (dt_dims[:, 0] * dt_dims[:, 2])[pairs.dt]
    area_gt = (gt_dims[:, 0] * gt_dims[:, 2])[pairs.gt]
    return _safe_divide(inter, area_dt + area_gt - inter)


def iou_3d(pairs, inter, dt_loc, dt_dims, gt_loc, gt_dims, z_center):
    """3D IoU of every pair: BEV intersection times the overlap of the height intervals."""
    z_d = dt_loc[pairs.dt, 1]
    z_g = gt_loc[pairs.gt, 1]
    h_d = dt_dims[pairs.dt, 1]
    h_g = gt_dims[pairs.gt, 1]
    top = np.minimum(z_d + h_d * (1 - z_center), z_g + h_g * (1 - z_center))
    bottom = np.maximum(z_d - h_d * z_center, z_g - h_g * z_center)
    iw = top - bottom
    vol_d = (dt_dims[:, 0] * dt_dims[:, 1] * dt_dims[:, 2])[pairs.dt]
    vol_g = (gt_dims[:, 0] * gt_dims[:, 1] * gt_dims[:, 2])[pairs.gt]
    inc = np.where((inter > 0) & (iw > 0), iw * inter, 0.0)
    out = _safe_divide(inc, vol_d + vol_g - inc)
    out[(inter <= 0) | (iw <= 0)] = 0.0
    return out


def image_overlap(boxes_a, boxes_b, criterion=-1):
    """Axis-aligned overlap of pairs ``boxes_a[k]`` / ``boxes_b[k]`` (x1, y1, x2, y2), float64.

    criterion -1: IoU; 0: intersection / area(boxes_a); 1: intersection / area(boxes_b).
    """
    iw = np.minimum(boxes_a[:, 2], boxes_b[:, 2]) - np.maximum(boxes_a[:, 0], boxes_b[:, 0])
    ih = np.minimum(boxes_a[:, 3], boxes_b[:, 3]) - np.maximum(boxes_a[:, 1], boxes_b[:, 1])
    inter = np.where((iw > 0) & (ih > 0), iw * ih, 0.0)
    area_a = (boxes_a[:, 2] - boxes_a[:, 0]) * (boxes_a[:, 3] - boxes_a[:, 1])
    area_b = (boxes_b[:, 2] - boxes_b[:, 0]) * (boxes_b[:, 3] - boxes_b[:, 1])
    if criterion == -1:
        den = area_a + area_b - inter
    elif criterion == 0:
        den = area_a
    else:
        den = area_b
    out = np.zeros(inter.shape, dtype=np.float64)
    ok = inter > 0
    out[ok] = inter[ok] / den[ok]
    return out


def image_iou(pairs, dt_bbox, gt_bbox):
    """2D image-box IoU of every pair (the legacy kernel's arithmetic, but never truncated to int)."""
    return image_overlap(dt_bbox[pairs.dt], gt_bbox[pairs.gt], -1)
