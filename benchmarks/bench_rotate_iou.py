"""Rotated-IoU throughput: each kradar_plugin backend against shapely 2.x (vectorised) and mmcv's C++
``box_iou_rotated`` on CPU, on the same boxes in the same process. Prints pairs per second and ratios.

Boxes: car- and truck-sized (1.5-12 m x 1.5-3 m), any heading, centres spread over a 100 m x 100 m
area (the density of a large evaluation batch); ``--area 5`` packs them so that nearly every pair overlaps
(the kernel itself, no pair skipped). Usage: python benchmarks/bench_rotate_iou.py [--sizes 100 300] [--area 5]
"""
import argparse
import inspect
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kradar_plugin.ops import rotate_iou_eval  # noqa: E402
from kradar_plugin.ops.backend_choice import BackendUnavailable  # noqa: E402


def make_boxes(rng, n, area=100.0):
    return np.column_stack([rng.uniform(0, area, (n, 2)), rng.uniform(1.5, 12.0, n), rng.uniform(1.5, 3.0, n),
                            rng.uniform(-np.pi, np.pi, n)])


def timed(fn, repeat):
    fn()  # warm-up: compile / cache / allocate
    best = float('inf')
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def peers():
    found = {}
    try:
        import shapely

        def shapely_iou(a, b):
            pa, pb = shapely.polygons(_corners(a)), shapely.polygons(_corners(b))
            inter = shapely.area(shapely.intersection(pa[:, None], pb[None, :]))
            union = (a[:, 2] * a[:, 3])[:, None] + (b[:, 2] * b[:, 3])[None, :] - inter
            return inter / union
        found['shapely %s' % shapely.__version__] = shapely_iou
    except ImportError:
        print('shapely not installed: skipped')
    try:
        import torch
        from mmcv import __version__ as mmcv_version
        from mmcv.ops import box_iou_rotated
        # mmcv >= 1.6 takes ``clockwise``; earlier releases (EchoFusion's 1.4.0) read the angle clockwise
        counter_clockwise = ({'clockwise': False} if 'clockwise' in inspect.signature(box_iou_rotated).parameters
                             else None)

        def mmcv_iou(a, b):
            if counter_clockwise is None:
                a, b = a * [1, 1, 1, 1, -1], b * [1, 1, 1, 1, -1]
            with torch.no_grad():
                return box_iou_rotated(torch.from_numpy(a).float(), torch.from_numpy(b).float(),
                                       **(counter_clockwise or {})).double().numpy()  # float32-only CPU op
        found['mmcv %s C++ box_iou_rotated' % mmcv_version] = mmcv_iou
        torch.set_num_threads(os.cpu_count() or 1)
    except ImportError as exc:
        print('mmcv-full not importable (%s): skipped' % exc)
    return found


def _corners(b):
    c, s = np.cos(b[:, 4])[:, None], np.sin(b[:, 4])[:, None]
    u = np.array([-1, -1, 1, 1])[None] * b[:, 2:3] / 2
    v = np.array([-1, 1, 1, -1])[None] * b[:, 3:4] / 2
    return np.stack([c * u + s * v + b[:, :1], -s * u + c * v + b[:, 1:2]], axis=-1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', type=int, nargs='+', default=[100, 300, 1000, 3000])
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--area', type=float, default=100.0,
                        help='side of the square the centres fall in, metres (5: nearly every pair overlaps)')
    args = parser.parse_args(argv)
    rng = np.random.RandomState(0)
    ours = {}
    for name in ('cuda', 'numba', 'numpy'):
        try:
            rotate_iou_eval(np.zeros((1, 5)) + 1, np.zeros((1, 5)) + 1, backend=name)
            ours[name] = name
        except BackendUnavailable as exc:
            print('backend %s unavailable: %s' % (name, exc.reason))
    others = peers()
    print('cpu cores: %d, centres in a %g m square' % (os.cpu_count() or 1, args.area))
    header = '%-6s %-38s %12s %10s  %s' % ('size', 'implementation', 'pairs/s', 'seconds', 'max |diff| vs numpy')
    for n in args.sizes:
        a, b = make_boxes(rng, n, args.area), make_boxes(rng, n, args.area)
        print('\n' + header)
        rows = {}
        for name in ours:
            seconds, res = timed(lambda: rotate_iou_eval(a, b, backend=name), args.repeat)
            rows['kradar_plugin ' + name] = (seconds, res)
        ref = rows['kradar_plugin numpy'][1]
        for name, fn in others.items():
            seconds, res = timed(lambda: fn(a, b), 1 if n >= 3000 else args.repeat)
            rows[name] = (seconds, res)
        for name, (seconds, res) in rows.items():
            print('%-6s %-38s %12.3g %10.4f  %.2g' % ('%dx%d' % (n, n), name, n * n / seconds, seconds,
                                                        float(np.abs(np.asarray(res) - ref).max())))
        for peer in others:
            for name in ours:
                print('       ratio kradar_plugin %-6s / %-28s = %7.2fx' % (
                    name, peer, rows[peer][0] / rows['kradar_plugin ' + name][0]))


if __name__ == '__main__':
    main()
