"""Evaluate a subset of already-checked frames without recomputing their overlaps.

A conditional evaluation (weather, road, time groups), a confidence threshold, a protocol's frame rule and
every bootstrap replicate are all "the same frames, some of them, some detections": :func:`select` gathers
the rows, offsets and per-pair overlaps of the chosen frames (repeats allowed: a bootstrap draws a
sequence twice) from a prepared full set, so the polygon clipping runs once per frame for everything.
"""
import numpy as np

from . import geometry, statistics
from .frames import Frames


def ranges(starts, ends):
    """Concatenated ``arange(s, e)`` for each pair (int64)."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(ends, dtype=np.int64) - starts
    total = int(lengths.sum()) if len(lengths) else 0
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return shift + np.arange(total, dtype=np.int64)


def _offsets(counts):
    off = np.zeros(len(counts) + 1, dtype=np.int64)
    if len(counts):
        off[1:] = np.cumsum(counts)
    return off


def select(prepared, frame_idx, dt_keep=None):
    """A prepared set (``kradar_eval._Prepared``-like) of the frames ``frame_idx`` (in that order, repeats
    allowed), keeping the detections where the boolean ``dt_keep`` (one per detection of the full set) is
    True. Overlaps already computed on the full set are gathered, not recomputed."""
    full = prepared.frames
    idx = np.asarray(frame_idx, dtype=np.int64)
    gt_lo, gt_hi = full.gt_off[idx], full.gt_off[idx + 1]
    dt_lo, dt_hi = full.dt_off[idx], full.dt_off[idx + 1]
    gt_rows = ranges(gt_lo, gt_hi)
    dt_rows = ranges(dt_lo, dt_hi)
    dt_frame = np.repeat(np.arange(len(idx), dtype=np.int64), dt_hi - dt_lo)   # position in idx
    if dt_keep is not None:
        keep = np.asarray(dt_keep, dtype=bool)[dt_rows]
        dt_rows, dt_frame = dt_rows[keep], dt_frame[keep]
    ng = gt_hi - gt_lo
    nd = np.bincount(dt_frame, minlength=len(idx)).astype(np.int64)
    # flat pair positions in the full set: frame f's block is nd_f x ng_f, row-major
    orig = idx[dt_frame]
    base = prepared.pairs.ov_off[orig] + (dt_rows - full.dt_off[orig]) * ng[dt_frame]
    positions = ranges(base, base + ng[dt_frame])

    frames = Frames.__new__(Frames)
    frames.n_frames = len(idx)
    frames.gt = dict((k, v[gt_rows]) for k, v in full.gt.items())
    frames.dt = dict((k, v[dt_rows]) for k, v in full.dt.items())
    frames.gt_off = _offsets(ng)
    frames.dt_off = _offsets(nd)
    frames.names = full.names

    sub = type(prepared).__new__(type(prepared))
    sub.frames = frames
    sub.pairs = geometry.FramePairs(frames.dt_off, frames.gt_off)
    sub.scores = np.ascontiguousarray(prepared.scores[dt_rows])
    sub.order = statistics.ScoreOrder(sub.scores, frames.dt_off)
    sub.gt_alpha = np.ascontiguousarray(prepared.gt_alpha[gt_rows])
    sub.dt_alpha = np.ascontiguousarray(prepared.dt_alpha[dt_rows])
    sub.cache = dict((key, np.ascontiguousarray(values[positions])) for key, values in prepared.cache.items())
    return sub


def frames_with_gt(frames, classes):
    """Per frame (bool): does it hold a GT object of one of ``classes``? K-Radar's pipeline writes no
    file for a frame whose label, after its class and region filter, is empty; EchoFusion's
    ``format_anno`` drops such frames with their detections. GT of other classes do not count."""
    codes = [code for cls in classes for code in frames.codes_of(cls)]
    rows = np.isin(frames.gt['code'], codes)
    gt_frame = np.repeat(np.arange(frames.n_frames, dtype=np.int64), np.diff(frames.gt_off))
    return np.bincount(gt_frame[rows], minlength=frames.n_frames) > 0


def in_region(side, pcd_limit_range, azimuth_range=None):
    """A checked annotation side (``validation.CheckedSide``) keeping the objects whose centre lies strictly
    inside a benchmark's region ``(x_min, y_min, z_min, x_max, y_max, z_max)`` (K-Radar's label filter and
    EchoFusion's compare with ``>`` and ``<``), in K-Radar's frame (x, y, z) = (location[2], location[0],
    location[1]) of the evaluator layout, and, with ``azimuth_range`` (degrees), strictly inside it."""
    from .validation import check_columns
    loc = side.data['location']
    lo = np.asarray(pcd_limit_range[:3], dtype=np.float64)
    hi = np.asarray(pcd_limit_range[3:], dtype=np.float64)
    xyz = loc[:, [2, 0, 1]]
    keep = np.all((xyz > lo) & (xyz < hi), axis=1)
    if azimuth_range is not None:
        az = np.degrees(np.arctan2(xyz[:, 1], xyz[:, 0]))
        keep &= (az > float(azimuth_range[0])) & (az < float(azimuth_range[1]))
    owner = np.repeat(np.arange(side.n_frames, dtype=np.int64), np.diff(side.offsets))
    offsets = _offsets(np.bincount(owner[keep], minlength=side.n_frames))
    data = dict((key, value[keep]) for key, value in side.data.items())
    return check_columns(side.side, data, offsets, side.fields)
