"""Benchmark of K-Radar's conditional evaluation on a K-Radar-sized synthetic test set.

17,535 frames in 58 sequences (K-Radar's test split), each sequence with one weather, road type and capture
time; per frame Poisson(5) Sedans and ~10 detections (``bench_kradar_eval.synthetic``). Timed, warm (numba
compiled), best of ``--repeat``:

* one pooled evaluation (``KRadarEvaluator`` without conditions: check, overlaps, matching, AP) of the
  protocol;
* the whole conditional evaluation: check, overlaps and matching once, then 18 groups (total, 7 weathers,
  8 roads, 2 times) at each confidence threshold 0.3, 0.5 and 0.7, the pooled AP at each threshold included
  -- the ratio to the pooled one is the target is at most 3;
* the same groups evaluated one by one from scratch (overlaps recomputed per group and threshold), as a
  text-file pipeline would;
* ``KRadarEvaluator`` with the conditions (what ``kradar-eval --conditions ... --score-threshold ...`` and the
  dataset evaluations run) at one threshold (0.3) and at four (0.0 0.3 0.5 0.7: one table each): the ratio
  of four to one -- the target is at most 1.5;
* K-Radar's own text-file path on a subset (``--kradar-frames``) when a K-Radar snapshot is available
  (``$KRADAR_REPO``, see tests/evaluation/_kradar_official.py): writing its per-condition KITTI files
  (gts, preds, desc, val.txt for 'all', the road, the time and the weather of each frame, per threshold)
  and reading them back with its ``kitti_common.get_label_annos``; its evaluator itself needs CUDA and is
  not timed here.

    python benchmarks/bench_kradar_conditions.py [--protocol kradar] [--frames 17535] [--repeat 3]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))

THRESHOLDS = (0.3, 0.5, 0.7)


def conditions(n_frames, n_sequences=58, seed=1):
    """One condition row per frame: frames in consecutive sequences, each sequence one weather / road /
    time (every K-Radar value present)."""
    from kradar_plugin.evaluation.conditions import ROADS, TIMES, WEATHER
    seq = np.sort(np.random.RandomState(seed).randint(0, n_sequences, n_frames))
    return [{'climate': WEATHER[s % 7], 'road_type': ROADS[s % 8], 'capture_time': TIMES[s % 2],
             'sequence': 'seq{}'.format(s)} for s in seq]


def _best(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def _kradar_text_path(gts, dts, conds, snapshot):
    """Seconds to write K-Radar's per-condition text files for every threshold and read each group back
    with K-Radar's own parser (kitti_common.get_label_annos, loaded from the snapshot)."""
    work = tempfile.mkdtemp(prefix='kradar_text_')
    try:
        name = 'utils/kitti_eval/kitti_common.py'
        path = os.path.join(snapshot, name)
        text = open(path, 'rb').read() if os.path.isfile(path) else subprocess.check_output(
            ['git', '--git-dir', snapshot, 'show', 'HEAD:' + name])
        with open(os.path.join(work, 'kitti_common.py'), 'wb') as f:
            f.write(text)
        sys.path.insert(0, work)
        try:
            import skimage  # noqa: F401
        except ImportError:     # kitti_common imports skimage.io for images; the label parser never uses it
            import types
            sys.modules['skimage'] = types.ModuleType('skimage')
            sys.modules['skimage'].io = sys.modules['skimage.io'] = types.ModuleType('skimage.io')
        import kitti_common
        start = time.perf_counter()
        for thr in THRESHOLDS:
            base = os.path.join(work, str(thr))
            for i, (g, d, c) in enumerate(zip(gts, dts, conds)):
                if not len(g['name']):
                    continue
                gt_lines = ['sed 0.00 0 0 50 50 150 150 {:.2f} {:.2f} {:.2f} {:.2f} {:.2f} {:.2f} {:.2f}'.format(
                    h, w, l, y, z, x, r) for (l, h, w), (y, z, x), r in zip(g['dimensions'], g['location'],
                                                                            g['rotation_y'])]
                keep = d['score'] > thr
                pred_lines = ['sed -1 -1 0 50 50 150 150 {} {} {} {} {} {} {} {}'.format(
                    h, w, l, y, z, x, r, s) for (l, h, w), (y, z, x), r, s in zip(
                        d['dimensions'][keep], d['location'][keep], d['rotation_y'][keep], d['score'][keep])]
                pred_lines = pred_lines or ['dummy -1 -1 0 0 0 0 0 0 0 0 0 0 0 0 0']
                for group in ('all', c['road_type'], c['capture_time'], c['climate']):
                    for sub, lines in (('gts', gt_lines), ('preds', pred_lines),
                                       ('desc', [c['capture_time'], c['road_type'], c['climate']])):
                        directory = os.path.join(base, group, sub)
                        if not os.path.isdir(directory):
                            os.makedirs(directory)
                        with open(os.path.join(directory, '{:06d}.txt'.format(i)), 'w') as f:
                            f.write('\n'.join(lines) + '\n')
                    with open(os.path.join(base, group, 'val.txt'), 'a') as f:
                        f.write('{:06d}\n'.format(i))
            for group in sorted(os.listdir(base)):
                ids = [int(v) for v in open(os.path.join(base, group, 'val.txt')).read().split()]
                kitti_common.get_label_annos(os.path.join(base, group, 'preds'))
                kitti_common.get_label_annos(os.path.join(base, group, 'gts'), ids)
        return time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--protocol', default='kradar')
    parser.add_argument('--frames', type=int, default=17535)
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--eval-types', nargs='+', default=['bev', '3d'])
    parser.add_argument('--kradar-frames', type=int, default=1000,
                        help="frames of the subset K-Radar's text-file path is timed on (0: skip)")
    parser.add_argument('--no-from-scratch', action='store_true')
    args = parser.parse_args(argv)
    from bench_kradar_eval import synthetic
    from kradar_plugin.evaluation.conditions import groups as condition_groups
    from kradar_plugin.evaluation.evaluator import KRadarEvaluator
    gts, dts = synthetic(args.frames)
    conds = conditions(args.frames)
    classes, et, proto = ['Sedan'], args.eval_types, args.protocol

    def evaluator_run(thresholds, rows, gt=gts, dt=dts):
        evaluator = KRadarEvaluator(classes, proto, et, score_threshold=thresholds, conditions=None)
        evaluator.evaluate_gathered(gt, dt, rows)
        return evaluator

    print('load average before: {}'.format(' '.join('{:.2f}'.format(v) for v in os.getloadavg())))
    evaluator_run(0.3, conds[:100], gts[:100], dts[:100])       # compile / load kernels
    pooled, _ = _best(lambda: evaluator_run(None, None), args.repeat)
    cond_s, results = _best(lambda: evaluator_run(list(THRESHOLDS), conds), args.repeat)
    n_groups = len(results.groups_at[0][proto])
    print('{} frames, {} groups x {} thresholds, protocol {}, eval types {}'.format(
        args.frames, n_groups, len(THRESHOLDS), proto, ' '.join(et)))
    print('one pooled evaluation:           {:7.3f} s'.format(pooled))
    print('conditional evaluation (all):    {:7.3f} s   ratio to pooled {:.2f} (target: <= 3)'.format(
        cond_s, cond_s / pooled))
    one_s, _ = _best(lambda: evaluator_run(0.3, conds), args.repeat)
    four_s, _ = _best(lambda: evaluator_run([0.0, 0.3, 0.5, 0.7], conds), args.repeat)
    print('KRadarEvaluator, 1 threshold:    {:7.3f} s'.format(one_s))
    print('KRadarEvaluator, 4 thresholds:   {:7.3f} s   ratio to 1 threshold {:.2f} (target: <= 1.5)'.format(
        four_s, four_s / one_s))
    if not args.no_from_scratch:
        members = condition_groups(conds)
        start = time.perf_counter()
        for thr in THRESHOLDS:
            for idx in members.values():
                evaluator_run(thr, None, [gts[i] for i in idx], [dts[i] for i in idx])
        scratch = time.perf_counter() - start
        print('groups one by one from scratch:  {:7.3f} s   ratio to pooled {:.2f}'.format(scratch, scratch / pooled))
    if args.kradar_frames:
        sys.path.insert(0, os.path.join(ROOT, 'tests', 'evaluation'))
        from _kradar_official import snapshot_path
        snapshot = snapshot_path()
        if snapshot is None:
            print("K-Radar's text-file path: skipped (no K-Radar snapshot; set KRADAR_REPO)")
        else:
            n = min(args.kradar_frames, args.frames)
            seconds = _kradar_text_path(gts[:n], dts[:n], conds[:n], snapshot)
            print("K-Radar's text-file path, files written and re-read only, {} frames: {:.3f} s ({:.2f} ms/frame; "
                  "x {} frames = {:.1f} s, {:.1f}x our whole conditional evaluation)".format(
                      n, seconds, 1000 * seconds / n, args.frames, seconds / n * args.frames,
                      seconds / n * args.frames / cond_s))
    print('load average after: {}'.format(' '.join('{:.2f}'.format(v) for v in os.getloadavg())))


if __name__ == '__main__':
    main()
