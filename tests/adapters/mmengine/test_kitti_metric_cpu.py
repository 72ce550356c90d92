"""mmdet3d 1.4's real KittiMetric on a machine without CUDA: the stock metric crashes in its rotated-IoU
module; with kradar_plugin imported (what ``custom_imports = ['kradar_plugin']`` does) it scores 100 AP on
perfect predictions of 50 GT cars (>= 40 GT boxes: the 40-point recall sampling can reach 100)."""
import json
import os.path as osp
import subprocess
import sys

import pytest

from .helpers import job_env

pytestmark = [pytest.mark.mm2]

CASE = osp.join(osp.dirname(osp.abspath(__file__)), 'kitti_metric_case.py')


def run_case(out_dir, *flags):
    return subprocess.run([sys.executable, CASE, str(out_dir)] + list(flags), env=job_env(), cwd=str(out_dir),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=900)


def cuda_usable():
    from numba import cuda
    return cuda.is_available()


def test_stock_kitti_metric_crashes_without_cuda(tmp_path):
    if cuda_usable():
        pytest.skip('a CUDA driver is present: the stock kernel compiles here')
    proc = run_case(tmp_path)
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert 'CudaSupportError' in proc.stderr, proc.stderr[-4000:]
    assert osp.join('kitti_utils', 'rotate_iou.py') in proc.stderr  # raised by mmdet3d's own module


def test_kitti_metric_with_kradar_plugin_scores_100_on_perfect_predictions(tmp_path):
    proc = run_case(tmp_path, '--plugin')
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out['num_gt'] >= 40
    metrics = out['metrics']
    ap40 = {k: v for k, v in metrics.items() if '/Car_' in k and '_AP40_' in k}
    # 3D, BEV and 2D, every difficulty, strict and loose IoU
    for kind in ('3D', 'BEV', '2D'):
        assert [k for k in ap40 if '_{}_'.format(kind) in k], sorted(metrics)
    assert len(ap40) >= 18, sorted(metrics)
    assert all(v == 100.0 for v in ap40.values()), ap40
