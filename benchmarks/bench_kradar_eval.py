"""Benchmark of kradar_eval on synthetic K-Radar-scale data.

Frames with Poisson(5) GT Sedans and ~10 detections each (80 % of the GT found with noise, the rest false
positives), BEV and 3D at IoU 0.3/0.5/0.7, for each protocol:

* warm: best of 3 calls in this process (numba compiled), wall and CPU seconds, per frame size;
* first call in a fresh process with an EMPTY numba cache (compilation included) and with a warm cache;
* peak memory traced by tracemalloc during a warm call;
* the speed ratio to a straightforward shapely-based legacy evaluation on a subset (same process, same
  AP to 1e-9), and to a recorded baseline of an earlier version of this evaluator (legacy 1.5 s, fixed 5.1 s warm on 20k);
* ``kradar-eval --help`` and ``kradar-eval`` end to end on pickled 20k-frame annotations (fresh processes,
  warm numba cache) written with pickle protocols 2 (mmcv.dump), 4 (our runner) and 5 (where this Python
  has it), with the files read in child processes (the default for untrusted files) and in process (only
  trusted files are: ``--trust-pickle`` with ``KRADAR_EVAL_LOAD_WORKERS=0``), and whether torch / mmcv /
  mmdet got imported;
* the same frames as EchoFusion infos + model results: converting them in process, ``KRadarEvaluator``'s
  ``process`` + ``evaluate`` (the dataset evaluations), and ``kradar-eval --infos --results`` end to end.

The machine's load average is printed before and after: on a shared machine every figure is slower.

    python benchmarks/bench_kradar_eval.py                       # 2k and 20k frames, all three protocols
    python benchmarks/bench_kradar_eval.py --frames 2000 20000 200000 --no-cold --no-cli
"""
import argparse
import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEFORE = {'legacy': 1.5, 'fixed': 5.1}      # warm seconds on 20k frames, the recorded baseline (same machine)
PROTOCOLS = ('legacy', 'revised', 'fixed')


def synthetic(n_frames, seed=0):
    """Per-frame GT and detection dicts in the evaluator layout (vectorised: 200k frames in seconds)."""
    rs = np.random.RandomState(seed)
    n_gt = rs.poisson(5, n_frames)
    total = int(n_gt.sum())
    loc = np.c_[rs.uniform(-6, 6, total), rs.uniform(-0.5, 0.5, total), rs.uniform(3, 70, total)]
    dims = np.c_[rs.uniform(3.5, 5, total), rs.uniform(1.4, 1.9, total), rs.uniform(1.6, 2.1, total)]
    rot = rs.uniform(-math.pi, math.pi, total)
    hit = rs.rand(total) < 0.8
    gt_frame = np.repeat(np.arange(n_frames), n_gt)
    n_hit = np.bincount(gt_frame[hit], minlength=n_frames)
    n_fp = np.maximum(rs.poisson(10, n_frames) - n_hit, 0)
    m, k = int(hit.sum()), int(n_fp.sum())
    h_loc = loc[hit] + rs.normal(0, 0.4, (m, 3))
    h_dims = dims[hit] * rs.uniform(0.85, 1.15, (m, 3))
    h_rot = rot[hit] + rs.normal(0, 0.15, m)
    f_loc = np.c_[rs.uniform(-6, 6, k), rs.uniform(-0.5, 0.5, k), rs.uniform(3, 70, k)]
    f_dims = np.c_[rs.uniform(3.5, 5, k), rs.uniform(1.4, 1.9, k), rs.uniform(1.6, 2.1, k)]
    f_rot = rs.uniform(-math.pi, math.pi, k)
    # detections frame by frame: the frame's hits, then its false positives
    d_frame = np.r_[gt_frame[hit], np.repeat(np.arange(n_frames), n_fp)]
    order = np.argsort(d_frame, kind='stable')
    d_loc, d_dims, d_rot = np.r_[h_loc, f_loc][order], np.r_[h_dims, f_dims][order], np.r_[h_rot, f_rot][order]
    n_dt = n_hit + n_fp
    scores = rs.uniform(0.05, 1.0, m + k)
    g_cut, d_cut = np.cumsum(n_gt)[:-1], np.cumsum(n_dt)[:-1]

    def split(a, cut):
        return np.split(a, cut)

    fake = np.array([50., 50, 150, 150])
    gts = [{'name': np.full(len(l), 'Sedan'), 'truncated': np.zeros(len(l)), 'occluded': np.zeros(len(l)),
            'alpha': np.zeros(len(l)), 'bbox': np.tile(fake, (len(l), 1)), 'location': l, 'dimensions': d,
            'rotation_y': r} for l, d, r in zip(split(loc, g_cut), split(dims, g_cut), split(rot, g_cut))]
    dts = [{'name': np.full(len(l), 'Sedan'), 'truncated': np.zeros(len(l)), 'occluded': np.zeros(len(l)),
            'alpha': np.zeros(len(l)), 'bbox': np.tile(fake, (len(l), 1)), 'location': l, 'dimensions': d,
            'rotation_y': r, 'score': s}
           for l, d, r, s in zip(split(d_loc, d_cut), split(d_dims, d_cut), split(d_rot, d_cut),
                                 split(scores, d_cut))]
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


def _load():
    return '{:.2f} {:.2f} {:.2f}'.format(*os.getloadavg()) if hasattr(os, 'getloadavg') else 'n/a'


def _timed(fn, repeat=3):
    best_wall, best_cpu = float('inf'), float('inf')
    for _ in range(repeat):
        w, c = time.time(), time.process_time()
        fn()
        best_wall, best_cpu = min(best_wall, time.time() - w), min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu


def _child(args):
    """--child: generate the data, then time the FIRST kradar_eval call of this process."""
    gts, dts = synthetic(args.frames[0])
    w, c = time.time(), time.process_time()
    from kradar_plugin.evaluation import kradar_eval
    kradar_eval(gts, dts, ['Sedan'], eval_types=('bev', '3d'), protocol=args.child)
    print(json.dumps({'wall': time.time() - w, 'cpu': time.process_time() - c}))
    return 0


def _fresh_first_call(protocol, frames, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), '--child', protocol, '--frames', str(frames)],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _children_cpu():
    try:
        import resource
    except ImportError:  # pragma: no cover (Windows)
        return float('nan')
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# pickle protocols of the annotation files: 2 is what mmcv.dump writes (EchoFusion's infos, mmdet3d's
# test.py --out), 4 what our runner writes, 5 (Python >= 3.8; numpy rebuilds each array in Python)
PICKLE_PROTOCOLS = tuple(p for p in (2, 4, 5) if p <= pickle.HIGHEST_PROTOCOL)


def _time_commands(commands):
    """Fresh-process ``kradar-eval`` timings of ``(label, argv, files read in process?)`` commands: best of
    two (wall s, CPU s) and the heavy frameworks a third run under ``-X importtime`` imported, per label."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('KRADAR_PLUGIN_REGISTER', None)
    out = {}
    for label, argv, in_process in commands:
        env['KRADAR_EVAL_LOAD_WORKERS'] = '0' if in_process else 'auto'
        argv = argv + ['--trust-pickle'] if in_process else argv   # untrusted files are always read in a child
        code = 'import sys, kradar_cli; sys.exit(kradar_cli.eval_main(sys.argv[1:]))'
        best = (float('inf'), float('inf'))
        for flags in ([], [], ['-X', 'importtime']):      # two timed runs, then one listing the imports
            t, c = time.time(), _children_cpu()
            proc = subprocess.run([sys.executable] + flags + ['-c', code] + argv, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            if not flags:
                best = min(best, (time.time() - t, _children_cpu() - c))
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr[-2000:])
        heavy = sorted(set(line.split('|')[-1].strip().split('.')[0] for line in proc.stderr.splitlines()
                           if line.startswith('import time:')) & {'torch', 'mmcv', 'mmdet', 'mmdet3d'})
        out[label] = (best, heavy)
    return out


def _dump(obj, path, pickle_protocol):
    with open(path, 'wb') as f:
        pickle.dump(obj, f, protocol=pickle_protocol)
    return path


def _cli(tmp, gts, dts, pickle_protocol, with_help):
    """``kradar-eval`` on annotation pickles written with ``pickle_protocol``: legacy, --protocol all, and
    legacy with the files read in process (and --help)."""
    legacy = ['--gt-annos', _dump(gts, os.path.join(tmp, 'gt.pkl'), pickle_protocol),
              '--dt-annos', _dump(dts, os.path.join(tmp, 'dt.pkl'), pickle_protocol),
              '--eval-types', 'bev', '3d', '--no-progress']
    return _time_commands(((('help', ['--help'], False),) if with_help else ()) + (
        ('legacy', legacy, False), ('all', legacy + ['--protocol', 'all'], False), ('in-process', legacy, True)))


def infos_and_results(gts, dts):
    """The synthetic annotations as EchoFusion infos (camera-style location (-y, -z, x), dimensions (w, h, l))
    and 0.17.3-style model results (LiDAR (x, y, z, dx, dy, dz, yaw), float32 as models output them), which
    ``kradar_format`` turns back into the same annotations under ``box_convention='mmdet3d<1.0'``."""
    infos = []
    for index, g in enumerate(gts):
        location = g['location'] * np.array([-1.0, -1.0, 1.0])
        infos.append({'sample_idx': index, 'annos': {
            'name': g['name'], 'truncated': g['truncated'], 'occluded': g['occluded'], 'alpha': g['alpha'],
            'bbox': g['bbox'], 'location': location, 'dimensions': g['dimensions'][:, [2, 1, 0]],
            'rotation_y': g['rotation_y']}})
    results = []
    for d in dts:
        loc, dims = d['location'], d['dimensions']
        boxes = np.c_[loc[:, 2], loc[:, 0], loc[:, 1], dims[:, 0], dims[:, 2], dims[:, 1], d['rotation_y']]
        results.append({'pts_bbox': {'boxes_3d': boxes.astype(np.float32), 'scores_3d': d['score'].astype(np.float32),
                                     'labels_3d': np.zeros(len(boxes), dtype=np.int64)}})
    return infos, results


def _cli_infos(tmp, infos, results):
    """``kradar-eval --infos --results``: infos written by mmcv.dump (pickle protocol 2), results by our runner (4)."""
    legacy = ['--infos', _dump(infos, os.path.join(tmp, 'infos.pkl'), 2),
              '--results', _dump(results, os.path.join(tmp, 'results.pkl'), 4),
              '--box-convention', 'mmdet3d<1.0', '--eval-types', 'bev', '3d', '--no-progress']
    return _time_commands((('legacy', legacy, False), ('all', legacy + ['--protocol', 'all'], False),
                           ('in-process', legacy, True)))


def _bench_infos(data, no_cli):
    """EchoFusion infos + model results (the dataset's evaluate and ``kradar-eval --infos``): converting them
    to the evaluator's columns in process, then the command end to end."""
    from kradar_plugin.evaluation import KRadarEvaluator
    from kradar_plugin.evaluation.inputs.kradar_columns import Converted, gather_infos, gather_result_frames
    from kradar_plugin.evaluation.protocols import get_protocol
    infos, results = infos_and_results(*data)
    n = len(infos)

    def converted():
        return Converted(gather_infos(infos), gather_result_frames(results, ('Sedan',)), ('Sedan',), 'mmdet3d<1.0')

    def evaluate():
        evaluator = KRadarEvaluator(['Sedan'], 'legacy', ('bev', '3d'), box_convention='mmdet3d<1.0')
        evaluator.process(infos, results)
        return evaluator.evaluate()

    gather = _timed(converted)
    conv = converted()
    sides = dict((p, _timed(lambda: conv.sides(get_protocol(p)))) for p in PROTOCOLS)
    whole = _timed(evaluate)
    print('\ninfos + results, {} frames, in process (best of 3, wall s / CPU s): reading both lists into columns '
          '{:.3f} / {:.3f}; converting for a protocol {}; KRadarEvaluator legacy (all of it) {:.3f} / {:.3f}'.format(
              n, gather[0], gather[1], ', '.join('{} {:.3f}'.format(p, sides[p][0]) for p in PROTOCOLS), *whole))
    if no_cli:
        return
    tmp = tempfile.mkdtemp(prefix='kradar-eval-bench-')
    try:
        cli = _cli_infos(tmp, infos, results)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('kradar-eval --infos (pickle protocol 2) --results (4), fresh process: legacy {:.2f} / {:.2f}; --protocol '
          'all {:.2f} / {:.2f}; legacy trusted, read in process {:.2f} / {:.2f}; torch/mmcv/mmdet imported: {}'.format(
              cli['legacy'][0][0], cli['legacy'][0][1], cli['all'][0][0], cli['all'][0][1], cli['in-process'][0][0],
              cli['in-process'][0][1], sorted(set(x for _, names in cli.values() for x in names)) or 'none'))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--frames', type=int, nargs='+', default=[2000, 20000])
    p.add_argument('--protocols', nargs='+', default=list(PROTOCOLS), choices=PROTOCOLS)
    p.add_argument('--subset', type=int, default=200, help='frames for the shapely comparison (0: skip)')
    p.add_argument('--no-cold', action='store_true', help='skip the fresh-process first calls')
    p.add_argument('--no-cli', action='store_true', help='skip the kradar-eval command timings')
    p.add_argument('--child', help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return _child(args)
    print('load average before: {}'.format(_load()))
    from kradar_plugin.evaluation import kradar_eval, _jit
    from kradar_plugin.ops import numba_gate
    results = {}
    main_size = 20000 if 20000 in args.frames else args.frames[-1]
    data = {}
    for n in args.frames:
        t = time.time()
        gts, dts = synthetic(n)
        if n == main_size:
            data = (gts, dts)
        print('{} frames: {} GT, {} detections ({:.1f} s to generate)'.format(
            n, sum(len(g['name']) for g in gts), sum(len(d['name']) for d in dts), time.time() - t))
        for proto in args.protocols:
            run = lambda: kradar_eval(gts, dts, ['Sedan'], eval_types=('bev', '3d'), protocol=proto)  # noqa: E731
            run()                                           # compile / load the numba cache
            wall, cpu = _timed(run, repeat=1 if n > 100000 else 3)
            results[(proto, n)] = {'wall': wall, 'cpu': cpu}
            if n == main_size:
                tracemalloc.start()
                run()
                results[(proto, n)]['peak_mib'] = tracemalloc.get_traced_memory()[1] / 2.0 ** 20
                tracemalloc.stop()
        del gts, dts
    kernel = 'numba' if numba_gate.frame_kernel() is not None else 'numpy'
    print('numba: {} ({}); frame-block IoU kernel: {}'.format(_jit.mode()[0], _jit.mode()[1] or 'compiled', kernel))
    print('\nwarm, best of 3 (wall s / CPU s):')
    print('{:<9s}'.format('protocol') + ''.join('{:>20s}'.format('{} frames'.format(n)) for n in args.frames)
          + '   us/frame (largest)   peak traced MiB ({})   vs baseline'.format(main_size))
    for proto in args.protocols:
        row = '{:<9s}'.format(proto)
        for n in args.frames:
            r = results[(proto, n)]
            row += '{:>20s}'.format('{:.3f} / {:.3f}'.format(r['wall'], r['cpu']))
        big = results[(proto, args.frames[-1])]
        row += '   {:>18.1f}'.format(big['wall'] / args.frames[-1] * 1e6)
        row += '   {:>22.0f}'.format(results[(proto, main_size)]['peak_mib'])
        if proto in BEFORE and main_size == 20000:
            row += '   {:.1f} s -> {:.2f} s ({:.1f}x)'.format(BEFORE[proto], results[(proto, 20000)]['wall'],
                                                             BEFORE[proto] / results[(proto, 20000)]['wall'])
        print(row)
    if not args.no_cold:
        print('\nfirst call in a fresh process, {} frames (wall s / CPU s):'.format(main_size))
        for proto in args.protocols:
            cache = tempfile.mkdtemp(prefix='kradar-numba-cache-')
            try:
                cold = _fresh_first_call(proto, main_size, cache)
                warm_cache = _fresh_first_call(proto, main_size, cache)
            finally:
                shutil.rmtree(cache, ignore_errors=True)
            print('{:<9s} empty numba cache {:.2f} / {:.2f}; warm cache {:.2f} / {:.2f}'.format(
                proto, cold['wall'], cold['cpu'], warm_cache['wall'], warm_cache['cpu']))
    if args.subset and 'legacy' in args.protocols and data:
        gts, dts = data
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
        per_frame_ours = results[('legacy', main_size)]['wall'] / main_size
        print('\nshapely legacy reference on {} frames: {:.2f} s (ours on the same subset {:.3f} s); max |AP diff| '
              '{:.1e}; per frame shapely / ours (warm, {} frames): {:.0f}x'.format(
                  args.subset, t_ref, t_ours, diff, main_size, per_frame_ref / per_frame_ours))
    if not args.no_cli and data:
        print('\nkradar-eval on the {}-frame annotation pickles (fresh process, warm numba cache; best of 2, '
              'wall s / CPU s):'.format(main_size))
        heavy = set()
        for number, pickle_protocol in enumerate(PICKLE_PROTOCOLS):
            tmp = tempfile.mkdtemp(prefix='kradar-eval-bench-')
            try:
                cli = _cli(tmp, data[0], data[1], pickle_protocol, with_help=number == 0)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            blobs = [pickle.dumps(part, protocol=pickle_protocol) for part in data]
            t = time.process_time()
            for blob in blobs:
                pickle.loads(blob)
            t_pickle = time.process_time() - t
            if 'help' in cli:
                print('  --help {:.2f} / {:.2f}'.format(*cli['help'][0]))
            print('  pickle protocol {}: legacy {:.2f} / {:.2f}; --protocol all {:.2f} / {:.2f}; legacy trusted, '
                  'read in process {:.2f} / {:.2f} (child processes: {:.2f}x faster); unpickling the two files '
                  'alone: {:.2f} CPU s'.format(pickle_protocol, cli['legacy'][0][0], cli['legacy'][0][1],
                                               cli['all'][0][0], cli['all'][0][1], cli['in-process'][0][0],
                                               cli['in-process'][0][1], cli['in-process'][0][0] / cli['legacy'][0][0],
                                               t_pickle))
            heavy.update(name for _, names in cli.values() for name in names)
        print('  torch/mmcv/mmdet imported by the command: {}'.format(sorted(heavy) or 'none'))
    if data:
        _bench_infos(data, args.no_cli)
    print('\nload average after: {}'.format(_load()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
