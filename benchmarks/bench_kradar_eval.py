"""Benchmark of kradar_eval on synthetic K-Radar-scale data (issue 3, item 6).

20,000 frames with ~5 GT and ~10 detections each, BEV and 3D at IoU 0.3/0.5/0.7. Prints the cold time
(first call in this process: numba compile or cache load included), the warm time (second call), the
peak traced memory of a warm call, and the speed ratio against a straightforward shapely-based
evaluation of a subset of the same data, run in the same process.

    python benchmarks/bench_kradar_eval.py [--frames 20000] [--subset 200] [--protocol legacy]
"""
import argparse
import math
import sys
import time
import tracemalloc

import numpy as np


def synthetic(n_frames, seed=0):
    rs = np.random.RandomState(seed)
    gts, dts = [], []
    for _ in range(n_frames):
        n = rs.poisson(5)
        loc = np.c_[rs.uniform(-6, 6, n), rs.uniform(-0.5, 0.5, n), rs.uniform(3, 70, n)]
        dims = np.c_[rs.uniform(3.5, 5, n), rs.uniform(1.4, 1.9, n), rs.uniform(1.6, 2.1, n)]
        rot = rs.uniform(-math.pi, math.pi, n)
        gts.append({'name': np.array(['Sedan'] * n), 'truncated': np.zeros(n), 'occluded': np.zeros(n),
                    'alpha': np.zeros(n), 'bbox': np.tile([50., 50, 150, 150], (n, 1)),
                    'location': loc, 'dimensions': dims, 'rotation_y': rot})
        hit = rs.rand(n) < 0.8
        m = int(hit.sum())
        k = max(rs.poisson(10) - m, 0)
        d_loc = np.r_[loc[hit] + rs.normal(0, 0.4, (m, 3)),
                      np.c_[rs.uniform(-6, 6, k), rs.uniform(-0.5, 0.5, k), rs.uniform(3, 70, k)]]
        d_dims = np.r_[dims[hit] * rs.uniform(0.85, 1.15, (m, 3)),
                       np.c_[rs.uniform(3.5, 5, k), rs.uniform(1.4, 1.9, k), rs.uniform(1.6, 2.1, k)]]
        d_rot = np.r_[rot[hit] + rs.normal(0, 0.15, m), rs.uniform(-math.pi, math.pi, k)]
        nd = m + k
        dts.append({'name': np.array(['Sedan'] * nd), 'truncated': np.zeros(nd), 'occluded': np.zeros(nd),
                    'alpha': np.zeros(nd), 'bbox': np.tile([50., 50, 150, 150], (nd, 1)),
                    'location': d_loc, 'dimensions': d_dims, 'rotation_y': d_rot,
                    'score': rs.uniform(0.05, 1.0, nd)})
    return gts, dts


def _rect(cx, cy, w, h, ang):
    from shapely.geometry import Polygon
    c, s = math.cos(ang), math.sin(ang)
    return Polygon([(c * dx + s * dy + cx, -s * dx + c * dy + cy)
                    for dx, dy in ((-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2))])


def shapely_eval(gts, dts, metric, min_ov, z_center=1.0):
    """Straightforward legacy-protocol AP: shapely overlaps, re-matching at every KITTI threshold."""
    frames = []
    for g, d in zip(gts, dts):
        ov = np.zeros((len(d['name']), len(g['name'])))
        gp = [_rect(l[0], l[2], s[0], s[2], r) for l, s, r in zip(g['location'], g['dimensions'], g['rotation_y'])]
        for j, (l, s, r) in enumerate(zip(d['location'], d['dimensions'], d['rotation_y'])):
            dp = _rect(l[0], l[2], s[0], s[2], r)
            for i, p in enumerate(gp):
                inter = dp.intersection(p).area
                if metric == 'bev':
                    ov[j, i] = inter / (s[0] * s[2] + g['dimensions'][i][0] * g['dimensions'][i][2] - inter)
                else:
                    gl, gs = g['location'][i], g['dimensions'][i]
                    top = min(l[1] + s[1] * (1 - z_center), gl[1] + gs[1] * (1 - z_center))
                    bot = max(l[1] - s[1] * z_center, gl[1] - gs[1] * z_center)
                    if inter > 0 and top > bot:
                        inc = inter * (top - bot)
                        ov[j, i] = inc / (np.prod(s) + np.prod(gs) - inc)
        frames.append((ov, d['score']))

    def match(ov, scores, thr, by_score):
        used, tp, fn, tps = set(), 0, 0, []
        for i in range(ov.shape[1]):
            c = [j for j in range(ov.shape[0]) if j not in used and scores[j] >= thr and ov[j, i] > min_ov]
            if not c:
                fn += 1
                continue
            b = max(c, key=(lambda j: scores[j]) if by_score else (lambda j: ov[j, i]))
            used.add(b)
            tp += 1
            tps.append(scores[b])
        return tp, sum(1 for j in range(ov.shape[0]) if scores[j] >= thr and j not in used), fn, tps

    num_gt = sum(f[0].shape[1] for f in frames)
    tps = sorted((s for ov, sc in frames for s in match(ov, sc, -1.0, True)[3]), reverse=True)
    thr, cur = [], 0.0
    for i, s in enumerate(tps):
        last = i == len(tps) - 1
        if not last and ((i + 2) / num_gt - cur) < (cur - (i + 1) / num_gt):
            continue
        thr.append(s)
        cur += 1 / 40.0
    prec = []
    for t in thr:
        tp = fp = 0
        for ov, sc in frames:
            a, b, _, _ = match(ov, sc, t, False)
            tp, fp = tp + a, fp + b
        prec.append(tp / float(tp + fp))
    prec = prec + [0.0] * (41 - len(prec))
    return sum(max(prec[i:]) for i in range(0, 41, 4)) / 11 * 100


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--frames', type=int, default=20000)
    p.add_argument('--subset', type=int, default=200, help='frames for the shapely comparison')
    p.add_argument('--protocol', default='legacy', choices=['legacy', 'revised', 'fixed'])
    args = p.parse_args(argv)
    t0 = time.time()
    gts, dts = synthetic(args.frames)
    n_gt = sum(len(g['name']) for g in gts)
    n_dt = sum(len(d['name']) for d in dts)
    print('data: {} frames, {} GT, {} detections ({:.1f} s to generate)'.format(
        args.frames, n_gt, n_dt, time.time() - t0))
    t0 = time.time()
    from kradar_plugin.evaluation import kradar_eval
    from kradar_plugin.evaluation._jit import NUMBA_AVAILABLE
    from kradar_plugin.ops import guard
    t_import = time.time() - t0
    t0 = time.time()
    _, cold = kradar_eval(gts, dts, ['Sedan'], eval_types=('bev', '3d'), protocol=args.protocol)
    t_cold = time.time() - t0
    tracemalloc.start()
    t0 = time.time()
    _, warm = kradar_eval(gts, dts, ['Sedan'], eval_types=('bev', '3d'), protocol=args.protocol)
    t_warm_traced = time.time() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t0 = time.time()
    kradar_eval(gts, dts, ['Sedan'], eval_types=('bev', '3d'), protocol=args.protocol)
    t_warm = time.time() - t0
    try:
        import resource
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    except ImportError:  # pragma: no cover (Windows)
        rss = float('nan')
    print('protocol {}: numba {}, IoU backend {}'.format(args.protocol, NUMBA_AVAILABLE, guard.select().name))
    print('import: {:.2f} s; cold: {:.2f} s; warm: {:.2f} s (under tracemalloc {:.2f} s)'.format(
        t_import, t_cold, t_warm, t_warm_traced))
    print('peak traced memory of a warm call: {:.1f} MiB; process max RSS {:.0f} MiB'.format(
        peak / 2.0 ** 20, rss))
    print('AP: ' + ', '.join('{}={:.4f}'.format(k, v) for k, v in sorted(warm.items()) if '/' in k and 'kradar' not in k))
    if args.protocol == 'legacy' and args.subset:
        sub_g, sub_d = gts[:args.subset], dts[:args.subset]
        t0 = time.time()
        _, ours = kradar_eval(sub_g, sub_d, ['Sedan'], eval_types=('bev', '3d'), protocol='legacy')
        t_ours = time.time() - t0
        t0 = time.time()
        ref = {}
        for metric in ('bev', '3d'):
            for iou in (0.3, 0.5, 0.7):
                ref['Sedan/{}@{:g}'.format(metric, iou)] = shapely_eval(sub_g, sub_d, metric, iou)
        t_ref = time.time() - t0
        diff = max(abs(ref[k] - ours[k]) for k in ref)
        per_frame_ref = t_ref / args.subset
        per_frame_ours = t_warm / args.frames
        print('shapely reference on {} frames: {:.2f} s (ours on the same subset {:.3f} s); max |AP diff| '
              '{:.2e}'.format(args.subset, t_ref, t_ours, diff))
        print('speed ratio per frame, shapely / ours (warm, full set): {:.0f}x; extrapolated shapely time for '
              '{} frames: {:.0f} s'.format(per_frame_ref / per_frame_ours, args.frames, per_frame_ref * args.frames))
    return 0


if __name__ == '__main__':
    sys.exit(main())
