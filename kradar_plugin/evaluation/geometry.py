"""Per-frame overlaps (2D image, BEV, 3D) between detections and GT, flattened frame by frame.

The BEV footprint of an annotation in the evaluator layout is (location[0], location[2],
dimensions[0], dimensions[2], rotation_y + yaw_offset) in ``rotate_iou_eval``'s (x, y, w, h, angle)
convention; with ``yaw_offset`` 0 the length lies along yaw + pi/2 (the legacy K-Radar #81 footprint),
with -pi/2 along the heading. The height interval of a box is
[z - h * z_center, z + h * (1 - z_center)] with z = location[1], h = dimensions[1]. All rotated-box
areas come from :func:`kradar_plugin.ops.rotate_iou_frames` (criterion 2, intersection area), which
computes the frames' own detection/GT pairs only.
"""
import numpy as np

from kradar_plugin.ops import rotate_iou_frames


class FramePairs(object):
    """Index of all (detection, GT) pairs frame by frame: block ``f`` is ``nd_f x ng_f``, row-major.

    ``ov_off[f]`` is where frame ``f``'s block starts in a flat pair array; :meth:`indices` gives the
    global detection / GT index of given flat positions (``dt`` / ``gt``: of every pair, built on first
    use).
    """

    def __init__(self, dt_off, gt_off):
        self.dt_off = np.asarray(dt_off, dtype=np.int64)
        self.gt_off = np.asarray(gt_off, dtype=np.int64)
        self.nd = np.diff(self.dt_off)
        self.ng = np.diff(self.gt_off)
        sizes = self.nd * self.ng
        self.ov_off = np.zeros(len(sizes), dtype=np.int64)
        if len(sizes):
            self.ov_off[1:] = np.cumsum(sizes)[:-1]
        self.total = int(sizes.sum()) if len(sizes) else 0
        self._all = None

    def indices(self, positions):
        """(detection index, GT index) of the pairs at flat ``positions`` (int64 arrays)."""
        positions = np.asarray(positions, dtype=np.int64)
        frame = np.searchsorted(self.ov_off, positions, side='right') - 1
        local = positions - self.ov_off[frame]
        ng = np.maximum(self.ng[frame], 1)
        return self.dt_off[frame] + local // ng, self.gt_off[frame] + local % ng

    def _every(self):
        """(detection indices, GT indices) of every pair, built on first use."""
        if self._all is None:
            self._all = self.indices(np.arange(self.total, dtype=np.int64))
        return self._all

    @property
    def dt(self):
        return self._every()[0]

    @property
    def gt(self):
        return self._every()[1]


def bev_footprints(location, dimensions, rotation_y, yaw_offset):
    """(N, 5) rotated rectangles (x, y, w, h, angle) for ``rotate_iou_eval``."""
    return np.stack([location[:, 0], location[:, 2], dimensions[:, 0], dimensions[:, 2],
                     rotation_y + yaw_offset], axis=1).astype(np.float64)


def intersection_areas(pairs, dt_boxes, gt_boxes):
    """BEV intersection area of every pair in ``pairs`` (flat float64): same-frame pairs only."""
    return rotate_iou_frames(dt_boxes, gt_boxes, pairs.dt_off, pairs.gt_off, criterion=2)


def _safe_divide(num, den):
    out = np.zeros(num.shape, dtype=np.float64)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def bev_iou(pairs, inter, dt_dims, gt_dims):
    """BEV IoU of every pair from its intersection area; a box's area is w * h as in the kernel.
    Computed where the intersection is positive (0 elsewhere)."""
    out = np.zeros(len(inter), dtype=np.float64)
    nz = np.flatnonzero(inter > 0)
    d, g = pairs.indices(nz)
    out[nz] = _safe_divide(inter[nz], dt_dims[d, 0] * dt_dims[d, 2] + gt_dims[g, 0] * gt_dims[g, 2] - inter[nz])
    return out


def iou_3d(pairs, inter, dt_loc, dt_dims, gt_loc, gt_dims, z_center):
    """3D IoU of every pair: BEV intersection times the overlap of the height intervals (0 where either
    is not positive)."""
    out = np.zeros(len(inter), dtype=np.float64)
    nz = np.flatnonzero(inter > 0)
    d, g = pairs.indices(nz)
    z_d = dt_loc[d, 1]
    z_g = gt_loc[g, 1]
    h_d = dt_dims[d, 1]
    h_g = gt_dims[g, 1]
    top = np.minimum(z_d + h_d * (1 - z_center), z_g + h_g * (1 - z_center))
    bottom = np.maximum(z_d - h_d * z_center, z_g - h_g * z_center)
    iw = top - bottom
    vol_d = dt_dims[d, 0] * dt_dims[d, 1] * dt_dims[d, 2]
    vol_g = gt_dims[g, 0] * gt_dims[g, 1] * gt_dims[g, 2]
    inc = np.where(iw > 0, iw * inter[nz], 0.0)
    value = _safe_divide(inc, vol_d + vol_g - inc)
    value[iw <= 0] = 0.0
    out[nz] = value
    return out


def image_overlap(boxes_a, boxes_b, criterion=-1):
    """Axis-aligned overlap of pairs ``boxes_a[k]`` / ``boxes_b[k]`` (x1, y1, x2, y2), float64.

    criterion -1: IoU; 0: intersection / area(boxes_a).
    """
    iw = np.minimum(boxes_a[:, 2], boxes_b[:, 2]) - np.maximum(boxes_a[:, 0], boxes_b[:, 0])
    ih = np.minimum(boxes_a[:, 3], boxes_b[:, 3]) - np.maximum(boxes_a[:, 1], boxes_b[:, 1])
    inter = np.where((iw > 0) & (ih > 0), iw * ih, 0.0)
    den = (boxes_a[:, 2] - boxes_a[:, 0]) * (boxes_a[:, 3] - boxes_a[:, 1])
    if criterion == -1:
        den = den + (boxes_b[:, 2] - boxes_b[:, 0]) * (boxes_b[:, 3] - boxes_b[:, 1]) - inter
    out = np.zeros(inter.shape, dtype=np.float64)
    ok = inter > 0
    out[ok] = inter[ok] / den[ok]
    return out


def image_iou(pairs, dt_bbox, gt_bbox):
    """2D image-box IoU of every pair (the legacy kernel's arithmetic, but never truncated to int)."""
    return image_overlap(dt_bbox[pairs.dt], gt_bbox[pairs.gt], -1)
