"""An independent, deliberately plain K-Radar evaluator for tests: shapely polygons for the rotated
overlaps, and a direct re-matching at every score threshold (no score-level bookkeeping)."""
import math

import numpy as np
from shapely.geometry import Polygon


def rect(cx, cy, w, h, ang):
    """Rectangle of the (x, y, w, h, angle) convention: corners rotated by R(-angle)."""
    c, s = math.cos(ang), math.sin(ang)
    pts = []
    for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)):
        pts.append((c * dx + s * dy + cx, -s * dx + c * dy + cy))
    return Polygon(pts)


def radar_rect(x, y, length, width, yaw):
    """Physical footprint in the radar frame: length along the heading (cos yaw, sin yaw)."""
    c, s = math.cos(yaw), math.sin(yaw)
    pts = []
    for a, b in ((length / 2, width / 2), (-length / 2, width / 2), (-length / 2, -width / 2),
                 (length / 2, -width / 2)):
        pts.append((x + c * a - s * b, y + s * a + c * b))
    return Polygon(pts)


def overlaps(gt, dt, metric, yaw_offset, z_center):
    """dt x gt overlap matrix for one frame."""
    out = np.zeros((len(dt['name']), len(gt['name'])))
    for j in range(len(dt['name'])):
        for i in range(len(gt['name'])):
            ld, dd, rd = dt['location'][j], dt['dimensions'][j], dt['rotation_y'][j] + yaw_offset
            lg, dg, rg = gt['location'][i], gt['dimensions'][i], gt['rotation_y'][i] + yaw_offset
            pd = rect(ld[0], ld[2], dd[0], dd[2], rd)
            pg = rect(lg[0], lg[2], dg[0], dg[2], rg)
            inter = pd.intersection(pg).area
            if metric == 'bev':
                out[j, i] = inter / (dd[0] * dd[2] + dg[0] * dg[2] - inter)
            else:
                top = min(ld[1] + dd[1] * (1 - z_center), lg[1] + dg[1] * (1 - z_center))
                bot = max(ld[1] - dd[1] * z_center, lg[1] - dg[1] * z_center)
                if inter > 0 and top - bot > 0:
                    inc = inter * (top - bot)
                    out[j, i] = inc / (np.prod(dd) + np.prod(dg) - inc)
    return out


def match(ov, gt_ok, dt_ok, scores, thr, min_ov, by_score):
    """KITTI matching of one frame with every GT / detection of the class counted."""
    used = set()
    tp = fn = 0
    tps = []
    for i in range(ov.shape[1]):
        cands = [j for j in range(ov.shape[0]) if j not in used and dt_ok[j] and scores[j] >= thr
                 and ov[j, i] > min_ov]
        if not gt_ok[i]:
            continue
        if not cands:
            fn += 1
            continue
        key = (lambda j: scores[j]) if by_score else (lambda j: ov[j, i])
        best = max(cands, key=key)
        used.add(best)
        tp += 1
        tps.append(scores[best])
    fp = sum(1 for j in range(ov.shape[0]) if dt_ok[j] and scores[j] >= thr and j not in used)
    return tp, fp, fn, tps


def reference_ap(gt_annos, dt_annos, cls, metric, min_ov, protocol):
    """AP (%) of class ``cls`` over all objects, for 'legacy', 'revised' or 'fixed'."""
    yaw_offset = -math.pi / 2 if protocol == 'fixed' else 0.0
    z_center = 1.0 if protocol == 'legacy' else 0.5
    frames = []
    for gt, dt in zip(gt_annos, dt_annos):
        ov = overlaps(gt, dt, metric, yaw_offset, z_center)
        frames.append((ov, [n == cls for n in gt['name']], [n == cls for n in dt['name']], list(dt['score'])))
    num_gt = sum(sum(f[1]) for f in frames)
    if protocol == 'fixed':
        thresholds = sorted(set(s for f in frames for s, ok in zip(f[3], f[2]) if ok), reverse=True)
    else:
        tp_scores = sorted((s for f in frames for s in match(f[0], f[1], f[2], f[3], -np.inf, min_ov, True)[3]),
                           reverse=True)
        thresholds, current = [], 0.0
        for i, s in enumerate(tp_scores):
            last = i == len(tp_scores) - 1
            left, right = (i + 1) / num_gt, ((i + 2) / num_gt if not last else (i + 1) / num_gt)
            if not last and (right - current) < (current - left):
                continue
            thresholds.append(s)
            current += 1 / 40.0
    points = []
    for t in thresholds:
        tp = fp = fn = 0
        for ov, gt_ok, dt_ok, scores in frames:
            a, b, c, _ = match(ov, gt_ok, dt_ok, scores, t, min_ov, False)
            tp, fp, fn = tp + a, fp + b, fn + c
        points.append((tp / (tp + fn) if tp + fn else 0.0, tp / (tp + fp) if tp + fp else 0.0))
    if protocol == 'fixed':
        total = 0.0
        for k in range(1, 41):
            ok = [p for r, p in points if r >= k / 40.0]
            total += max(ok) if ok else 0.0
        return total / 40 * 100
    prec = [p for _, p in points] + [0.0] * (41 - len(points))
    prec = [max(prec[i:]) for i in range(41)]
    if protocol == 'legacy':
        return sum(prec[0::4]) / 11 * 100
    return sum(prec) / 41 * 100
