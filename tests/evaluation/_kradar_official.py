"""Run K-Radar's own evaluators (utils/kitti_eval/eval.py and eval_revised.py) from a fetched snapshot of
kaist-avelab/K-Radar, or 4DR-MR's eval.py from a snapshot of kaist-avelab/4DR-MR, in a child process with
numba's CUDA simulator (their rotated IoU is a CUDA kernel).

Nothing of K-Radar or 4DR-MR is kept in this repository: the files are read from the snapshot (a git
directory, read with ``git show``, or a checkout) into a temporary directory at test time.

    NUMBA_ENABLE_CUDASIM=1 python _kradar_official.py SNAPSHOT IN.pkl OUT.json [kradar|4drmr]

IN.pkl: ``{'groups': {name: (gt_annos, dt_annos)}, 'classes': [0, 1, ...]}`` with K-Radar's class keywords
('sed', 'bus') as names. OUT.json: ``{'eval'|'revised': {group: {class index: {'iou': [...], 'bev': [...],
'3d': [...]}}}}`` -- K-Radar's returned dict (first difficulty column), one call per class as its
``validate_kitti_conditional`` does; with ``4drmr``: ``{'4drmr': {...}}`` from 4DR-MR's eval.py.
"""
import json
import os
import pickle
import subprocess
import sys
import tempfile

FILES = ('utils/kitti_eval/eval.py', 'utils/kitti_eval/eval_revised.py', 'utils/kitti_eval/nms_gpu.py')
#: where the ``fetch`` tool leaves the snapshot on the machines this project is developed on
DEFAULT_SNAPSHOT = '/work/.mirror/kaist-avelab+K-Radar/repo'
#: 4DR-MR's evaluator (K-Radar's eval.py with z_center=0.5) and its rotated-IoU kernel
FILES_4DRMR = ('utils/kitti_eval/eval.py', 'utils/kitti_eval/nms_gpu.py')
DEFAULT_SNAPSHOT_4DRMR = '/work/.mirror/kaist-avelab+4DR-MR/repo'


def snapshot_path(variable='KRADAR_REPO', default=DEFAULT_SNAPSHOT):
    """``$KRADAR_REPO`` (or ``variable``) or the default snapshot, when it holds the evaluators; else None."""
    path = os.environ.get(variable, default)
    if os.path.isfile(os.path.join(path, FILES[0])):
        return path
    if os.path.isdir(path):
        try:
            subprocess.check_output(['git', '--git-dir', path, 'cat-file', '-e', 'HEAD:' + FILES[0]],
                                    stderr=subprocess.STDOUT)
            return path
        except (OSError, subprocess.CalledProcessError):
            return None
    return None


def snapshot_4drmr():
    """``$FOURDRMR_REPO`` or the default 4DR-MR snapshot, when it holds 4DR-MR's eval.py; else None."""
    return snapshot_path('FOURDRMR_REPO', DEFAULT_SNAPSHOT_4DRMR)


def _extract(snapshot, out_dir, files=FILES):
    for name in files:
        if os.path.isfile(os.path.join(snapshot, name)):
            with open(os.path.join(snapshot, name), 'rb') as f:
                text = f.read()
        else:
            text = subprocess.check_output(['git', '--git-dir', snapshot, 'show', 'HEAD:' + name])
        with open(os.path.join(out_dir, os.path.basename(name)), 'wb') as f:
            f.write(text)


def _scipy_if_missing():
    """K-Radar's eval.py and eval_revised.py import scipy's ``interp1d`` and never call it: without scipy
    a stand-in module that raises if it ever were called lets them load."""
    import numba  # noqa: F401  (first: numba checks the version of a scipy it finds loaded)
    try:
        import scipy.interpolate  # noqa: F401
    except ImportError:
        import types

        def interp1d(*args, **kwargs):
            raise RuntimeError('scipy stand-in: interp1d called')

        scipy = types.ModuleType('scipy')
        interpolate = types.ModuleType('scipy.interpolate')
        interpolate.interp1d = interp1d
        scipy.interpolate = interpolate
        sys.modules['scipy'] = scipy
        sys.modules['scipy.interpolate'] = interpolate


def main(snapshot, in_path, out_path, flavour='kradar'):
    with open(in_path, 'rb') as f:
        job = pickle.load(f)
    work = tempfile.mkdtemp(prefix='kradar_official_')
    _extract(snapshot, work, FILES_4DRMR if flavour == '4drmr' else FILES)
    sys.path.insert(0, work)
    _scipy_if_missing()
    import eval as kradar_eval_py            # noqa: E402  (K-Radar's module names)
    if flavour == '4drmr':
        runs = (('4drmr', kradar_eval_py, 'get_official_eval_result'),)
    else:
        import eval_revised as kradar_revised_py  # noqa: E402
        runs = (('eval', kradar_eval_py, 'get_official_eval_result'),
                ('revised', kradar_revised_py, 'get_official_eval_result_revised'))
    out = {}
    for tag, module, fn in runs:
        out[tag] = {}
        for group, (gts, dts) in job['groups'].items():
            out[tag][group] = {}
            for cls in job['classes']:
                metrics, _ = getattr(module, fn)(gts, dts, cls, is_return_with_dict=True)
                out[tag][group][str(cls)] = dict((k, [float(v) for v in metrics[k]]) for k in ('iou', 'bev', '3d'))
    with open(out_path, 'w') as f:
        json.dump(out, f)


if __name__ == '__main__':
    main(*sys.argv[1:5])
