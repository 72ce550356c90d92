"""The project's own evaluate (EchoFusion's flow on mmdet3d's real KittiDataset and KITTI evaluation core)
against kradar_plugin's evaluate given to the same class, in process, on real mmdet3d 1.0.0rc6 boxes."""
import copy
import os
import os.path as osp
import subprocess
import sys

import numpy as np
import pytest
import torch
from kradar_plugin.distributed import run_context

from .conftest import CONFIG, ROOT


def build_val_dataset():
    from mmcv import Config
    from mmdet3d.datasets import build_dataset
    cfg = Config.fromfile(CONFIG)  # imports projects.mmdet3d_plugin and kradar_plugin (custom_imports)
    return build_dataset(cfg.data.val), cfg


def noisy_predictions(dataset, seed=0):
    """Per frame: every GT box (all classes) moved by centimetres to decimetres and rotated by a few degrees,
    labelled Sedan, plus two false positives; random scores. Real LiDARInstance3DBoxes of the installed
    mmdet3d, made from the GT exactly as the dataset makes its training targets."""
    from mmdet3d.core.bbox import LiDARInstance3DBoxes
    rng = np.random.RandomState(seed)
    results = []
    for i in range(len(dataset)):
        gt = dataset.get_ann_info(i)['gt_bboxes_3d'].tensor.numpy().astype(np.float64)
        n = len(gt)
        boxes = gt.copy()
        boxes[:, :2] += rng.normal(0, 0.35, (n, 2))
        boxes[:, 2] += rng.normal(0, 0.1, n)
        boxes[:, 3:6] *= rng.uniform(0.9, 1.1, (n, 3))
        boxes[:, 6] += rng.normal(0, 0.08, n)
        fp = np.array([[rng.uniform(5, 70), rng.uniform(-6, 6), -0.5, 4.2, 1.8, 1.5, rng.uniform(-3, 3)]
                       for _ in range(2)])
        boxes = np.concatenate([boxes, fp], axis=0).astype(np.float32)
        results.append({'pts_bbox': {
            'boxes_3d': LiDARInstance3DBoxes(torch.from_numpy(boxes)),
            'scores_3d': torch.from_numpy(rng.uniform(0.05, 1.0, len(boxes)).astype(np.float32)),
            'labels_3d': torch.zeros(len(boxes), dtype=torch.long)}})
    return results


def patched(dataset):
    from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import with_kradar_evaluate
    cls = with_kradar_evaluate(type(dataset))
    other = cls.__new__(cls)
    other.__dict__.update(dataset.__dict__)
    return other


def test_project_evaluate_equals_plugin_legacy(on_project_path, tmp_path):
    dataset, cfg = build_val_dataset()
    assert type(dataset).__module__ == 'projects.mmdet3d_plugin.datasets.kradar_dataset'
    results = noisy_predictions(dataset)
    theirs = dataset.evaluate(copy.deepcopy(results), pipeline=cfg.evaluation.pipeline)
    ours = patched(dataset).evaluate(copy.deepcopy(results), pipeline=cfg.evaluation.pipeline,
                                     pklfile_prefix=str(tmp_path / 'ours'))
    keys = sorted(k for k in theirs if '_2D_' not in k)
    # BEV + 3D x 3 difficulties x EchoFusion's two labels: '_strict' is the first threshold (0.3), '_loose'
    # the last one written (0.7 overwrites 0.5)
    assert len(keys) == 12
    assert {k: ours[k] for k in keys} == {k: theirs[k] for k in keys}
    # the predictions are good but imperfect: the comparison is not between two zeros or two hundreds
    assert 20 < theirs['pts_bbox/kradar/Sedan_BEV_easy_strict'] < 100
    assert theirs['pts_bbox/kradar/Sedan_3D_easy_loose'] < theirs['pts_bbox/kradar/Sedan_BEV_easy_strict']


def test_plugin_evaluate_accepts_echofusion_keywords_and_writes_its_outputs(on_project_path, tmp_path):
    dataset, cfg = build_val_dataset()
    results = noisy_predictions(dataset, seed=1)
    prefix, sub = str(tmp_path / 'res'), str(tmp_path / 'sub')
    metrics = patched(dataset).evaluate(copy.deepcopy(results), metric=None, logger=None, pklfile_prefix=prefix,
                                        submission_prefix=sub, show=False, out_dir=None,
                                        pipeline=cfg.evaluation.pipeline)
    assert all(k.startswith('pts_bbox/') for k in metrics)
    assert 'pts_bbox/kradar/Sedan_BEV_easy_strict' in metrics  # EchoFusion's keys (save_best keeps working)
    assert osp.isfile(prefix + '_results.pkl')          # the raw predictions, first
    assert osp.isfile(prefix + 'pts_bbox.pkl')          # what EchoFusion's format_results writes
    txt = sorted(os.listdir(sub + 'pts_bbox'))
    assert len(txt) == len(dataset) and txt[0] == '{:06d}.txt'.format(dataset.data_infos[0]['image']['image_idx'])
    import mmcv
    kitti = mmcv.load(prefix + 'pts_bbox.pkl')
    assert len(kitti) == len(dataset) and 'rotation_y' in kitti[0]


def test_img_bbox_branch_evaluated_in_2d(on_project_path):
    dataset, _ = build_val_dataset()
    results = noisy_predictions(dataset, seed=2)
    for r in results:
        r['img_bbox'] = copy.deepcopy(r['pts_bbox'])
    metrics = patched(dataset).evaluate(results)
    img = [k for k in metrics if k.startswith('img_bbox/')]
    assert img and all('_2D_' in k or '/bbox@' in k for k in img), img
    assert any(k.startswith('pts_bbox/') and '_BEV_' in k for k in metrics)


def test_unknown_evaluation_option_is_dropped_with_one_warning(on_project_path, caplog):
    dataset, _ = build_val_dataset()
    results = noisy_predictions(dataset, seed=3)
    import logging
    with caplog.at_level(logging.WARNING):
        metrics = patched(dataset).evaluate(results, logger='root', jsonfile_prefix='x', iou_thresholds=(0.5,))
    assert sum('ignores the evaluation options' in r.getMessage() for r in caplog.records) == 1
    assert "['jsonfile_prefix']" in caplog.text
    # the protocol setting was applied: one IoU threshold (EchoFusion's label for the first one is '_strict')
    kradar = [k for k in metrics if '/kradar/' in k]
    assert kradar and all(k.endswith('_strict') for k in kradar), sorted(metrics)
    assert sorted(k.rsplit('@', 1)[1] for k in metrics if '@' in k) == ['0.5'] * 3


def test_checkpoint_of_the_other_box_convention_is_warned_once(on_project_path, caplog):
    """The runner adapter records the loaded checkpoint's meta in the run context; a checkpoint trained under the
    other box convention than the installed mmdet3d's (0.17.3 under rc6, rc6 under 0.17.3) gets one warning
    naming both and the fix; one of the installed convention none."""
    import logging
    import mmdet3d
    old = mmdet3d.__version__.startswith('0.')
    other, same = ('1.0.0rc6', '0.17.3') if old else ('0.17.3', '1.0.0rc6')
    dataset, _ = build_val_dataset()
    results = noisy_predictions(dataset, seed=4)
    ours = patched(dataset)
    context = run_context.start()   # as the runner adapter starts a run, then records the loaded meta
    context.checkpoint_meta = {'mmdet3d_version': other, 'epoch': 24}
    with caplog.at_level(logging.INFO):
        ours.evaluate(results, logger='root')
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and other in r.getMessage()]
    assert len(warned) == 1, caplog.text[-3000:]
    assert "box_convention='{}'".format('mmdet3d>=1.0' if old else 'mmdet3d<1.0') in warned[0]
    notes = [r.getMessage() for r in caplog.records if "'legacy' protocol = EchoFusion's kradar_eval" in r.getMessage()]
    assert len(notes) == 1
    caplog.clear()
    context.checkpoint_meta = {'mmdet3d_version': same}
    with caplog.at_level(logging.INFO):
        ours.evaluate(results, logger='root')
    assert not [r for r in caplog.records if r.levelno == logging.WARNING], caplog.text[-3000:]


def test_failed_evaluation_names_the_saved_results_and_the_offline_command(on_project_path, caplog, tmp_path):
    import logging
    dataset, _ = build_val_dataset()
    results = noisy_predictions(dataset, seed=5)[:-1]  # one frame short: as after a broken collection
    with caplog.at_level(logging.ERROR), pytest.raises(ValueError, match='results for {} frames'.format(len(dataset))):
        patched(dataset).evaluate(results, logger='root', pklfile_prefix=str(tmp_path / 'x'))
    saved = str(tmp_path / 'x_results.pkl')
    assert osp.isfile(saved)
    import mmdet3d
    convention = 'mmdet3d<1.0' if mmdet3d.__version__.startswith('0.') else 'mmdet3d>=1.0'
    import shlex
    line = [l.strip() for l in caplog.text.splitlines() if l.strip().startswith('kradar-eval ')][0]
    words = shlex.split(line)      # the evaluator's offline command, shell-quoted
    assert words[:7] == ['kradar-eval', '--infos', dataset.ann_file, '--results', saved, '--classes', 'Sedan']
    assert words[words.index('--protocol') + 1] == 'legacy' and '--box-convention=' + convention in words


CRASH = """
import mmdet3d.core.evaluation.kitti_utils.rotate_iou
print('IMPORTED')
"""

KITTI_EVAL = """
import numpy as np
from mmcv import Config
cfg = Config.fromfile({config!r})   # custom_imports = ['kradar_plugin'] only
from mmdet3d.core.evaluation import kitti_eval
rng = np.random.RandomState(0)
gt = []
for f in range(15):
    n = 3
    loc = np.stack([rng.uniform(-10, 10, n), rng.uniform(1, 2, n), rng.uniform(5, 60, n)], axis=1)
    dims = np.stack([rng.uniform(3.5, 4.5, n), rng.uniform(1.4, 1.7, n), rng.uniform(1.5, 1.9, n)], axis=1)
    gt.append(dict(name=np.array(['Car'] * n), truncated=np.zeros(n), occluded=np.zeros(n, dtype=np.int64),
                   alpha=rng.uniform(-3, 3, n), bbox=np.tile([100., 100., 300., 250.], (n, 1)),
                   dimensions=dims, location=loc, rotation_y=rng.uniform(-3, 3, n)))
dt = []
for g in gt:
    d = dict((k, v.copy()) for k, v in g.items())
    d['score'] = rng.uniform(0.5, 1.0, len(g['name']))
    dt.append(d)
_, ap = kitti_eval(gt, dt, ['Car'], eval_types=['bbox', 'bev', '3d'])
# mmdet3d 1.0: KITTI/Car_3D_AP40_moderate_strict, ..._AP11_...; 0.17.3: KITTI/Car_3D_moderate_strict
keys = sorted(k for k in ap if k.startswith(('KITTI/Car_3D_', 'KITTI/Car_BEV_')) and k.endswith('moderate_strict'))
print('KEYS', ' '.join(keys))
print('AP', *[ap[k] for k in keys])
"""


def test_mmdet3d_kitti_eval_crashes_without_plugin_and_scores_100_with_it(tmp_path):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES='', PYTHONPATH=ROOT)
    crash = subprocess.run([sys.executable, '-c', CRASH], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=300)
    out = crash.stdout.decode()
    assert crash.returncode != 0 and 'IMPORTED' not in out, out[-2000:]
    assert 'CudaSupportError' in out or 'cuda' in out.lower(), out[-2000:]
    config = tmp_path / 'plugin_only.py'
    config.write_text("custom_imports = dict(imports=['kradar_plugin'], allow_failed_imports=False)\n")
    ok = subprocess.run([sys.executable, '-c', KITTI_EVAL.format(config=str(config))], env=env,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = ok.stdout.decode()
    assert ok.returncode == 0, out[-3000:]
    keys = [l for l in out.splitlines() if l.startswith('KEYS ')][-1].split()[1:]
    assert len(keys) >= 2, out[-3000:]
    line = [l for l in out.splitlines() if l.startswith('AP ')][-1]
    assert [float(v) for v in line.split()[1:]] == pytest.approx([100.0] * len(keys))
