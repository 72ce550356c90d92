"""``kradar-eval --kitti-dir`` against K-Radar's own parser and evaluator on the same prediction folders.

Writes a ``validate_kitti_conditional`` folder (``<conf>/{all,<road>,<time>,<weather>}/{preds,gts,desc}`` +
``val.txt``, the format K-Radar's pipeline writes) for ``--frames`` test frames (default 17,535, K-Radar's
test split) with Sedans and buses, then times, in this process, after a warm-up of both on a small folder:

* K-Radar: what ``validate_kitti_conditional`` does after inference -- for every condition folder,
  ``kitti_common.get_label_annos`` on predictions and GT (``read_imageset_file`` for the ids) and
  ``eval.py``'s ``get_official_eval_result`` per class (read from the K-Radar snapshot). Its rotated IoU is
  a CUDA kernel; on this CPU-only machine it runs on our numba-CPU drop-in (``rotate_iou_gpu_eval``), the
  rest of its evaluator unchanged;
* ours: ``kradar-eval --kitti-dir <conf> --protocol kradar --json`` (read, pair, evaluate every group).

Both give the same AP per group and class (checked), and the ratio of the times is printed.

    python benchmarks/bench_kitti_dir.py [--frames 17535] [--dir work_dirs/bench_kitti]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, 'tests', 'evaluation'))

from tests.files import _kitti_writer as writer  # noqa: E402
from tests.files import _snapshots as snap  # noqa: E402

CLASSES = ('Sedan', 'Bus or Truck')


def kradar_eval_module():
    """K-Radar's eval.py, importable, with its CUDA IoU replaced by kradar_plugin's CPU drop-in."""
    from _kradar_official import _extract, _scipy_if_missing
    from kradar_plugin.ops import rotate_iou_gpu_eval
    work = tempfile.mkdtemp(prefix='kradar_eval_')
    _extract(snap.kradar_repo(), work)
    os.remove(os.path.join(work, 'nms_gpu.py'))
    stand_in = types.ModuleType('nms_gpu')
    stand_in.rotate_iou_gpu_eval = rotate_iou_gpu_eval
    sys.modules['nms_gpu'] = stand_in
    sys.path.insert(0, work)
    _scipy_if_missing()
    import eval as kradar_eval_py
    return kradar_eval_py


def kradar_flow(conf_dir, module, kitti):
    """validate_kitti_conditional's evaluation part: {group folder: {class index: (bev, 3d)}}."""
    out = {}
    for cond in sorted(os.listdir(conf_dir)):
        base = os.path.join(conf_dir, cond)
        if not os.path.isdir(base):
            continue
        dt_annos = kitti['get_label_annos'](os.path.join(base, 'preds'))
        ids = kitti['read_imageset_file'](os.path.join(base, 'val.txt'))
        gt_annos = kitti['get_label_annos'](os.path.join(base, 'gts'), ids)
        if len(ids) < 10:          # K-Radar's evaluator splits the frames in 10 parts
            continue
        out[cond] = {}
        for cls in range(len(CLASSES)):
            metrics, _ = module.get_official_eval_result(gt_annos, dt_annos, cls, is_return_with_dict=True)
            out[cond][cls] = (list(metrics['iou']), list(metrics['bev']), list(metrics['3d']))
    return out


def ours(conf_dir, json_path):
    import contextlib
    import io
    import kradar_cli
    with contextlib.redirect_stdout(io.StringIO()):      # the tables: not what is timed here
        rc = kradar_cli.eval_main(['--kitti-dir', conf_dir, '--protocol', 'kradar', '--classes'] + list(CLASSES) +
                                  ['--eval-types', 'bev', '3d', '--json', json_path, '--no-progress'])
    assert rc == 0
    with open(json_path) as f:
        return json.load(f)['groups']


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--frames', type=int, default=17535)
    p.add_argument('--dir', default=os.path.join(ROOT, 'work_dirs', 'bench_kitti'))
    args = p.parse_args()
    if snap.kradar_repo() is None:
        sys.exit('needs the K-Radar snapshot (KRADAR_REPO)')
    big = os.path.join(args.dir, 'f{}'.format(args.frames))
    small = os.path.join(args.dir, 'small')
    t0 = time.perf_counter()
    for path, n in ((big, args.frames), (small, 120)):
        if not os.path.isfile(os.path.join(path, 'done')):
            shutil.rmtree(path, ignore_errors=True)
            writer.write_folders(path, writer.random_frames(n, seed=11), conditional=True)
            open(os.path.join(path, 'done'), 'w').close()
    print('folders ready in {:.1f} s ({} frames, conditional layout)'.format(time.perf_counter() - t0, args.frames))
    module, kitti = kradar_eval_module(), snap.kradar_kitti()
    tmp = tempfile.mkdtemp()
    kradar_flow(os.path.join(small, '0.3'), module, kitti)       # warm-up: numba compiles both
    ours(os.path.join(small, '0.3'), os.path.join(tmp, 'w.json'))
    t0 = time.perf_counter()
    mine = ours(os.path.join(big, '0.3'), os.path.join(tmp, 'o.json'))
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    theirs = kradar_flow(os.path.join(big, '0.3'), module, kitti)
    t_theirs = time.perf_counter() - t0
    groups = {'all': 'total'}
    compared = 0
    for cond, per_class in theirs.items():
        name = groups.get(cond) or next(g for g in mine if g.endswith('/' + cond))
        for cls, (ious, bev, ap3d) in per_class.items():
            for iou, b, d in zip(ious, bev, ap3d):
                for metric, value in (('bev', b), ('3d', d)):
                    got = mine[name]['metrics']['{}/{}@{:g}'.format(CLASSES[cls], metric, iou)]
                    assert abs(got - value) < 1e-6, (cond, cls, metric, iou, got, value)
                    compared += 1
    print('K-Radar (get_label_annos per condition folder + eval.py per class, {} groups): {:.2f} s'.format(
        len(theirs), t_theirs))
    print('ours (kradar-eval --kitti-dir, every group): {:.2f} s   ratio K-Radar / ours = {:.1f}x   '
          '({} values equal)'.format(t_ours, t_theirs / t_ours, compared))


if __name__ == '__main__':
    main()
