"""Issue 30 on the OpenMMLab 2.0 stack, through mmdet3d 1.4's own tools/train.py (KRADAR_EVAL_ONLY=1, torchrun,
gloo): a truncated radar file names its dataset index and file; after the fix a relaunch with one process infers
only what is missing and collects the results of an uninterrupted run, bit for bit."""
import os.path as osp
import pickle

import pytest

from .helpers import demo_data, launch, write_config
from .test_eval_only_launch import assert_same_predictions

pytestmark = [pytest.mark.launch, pytest.mark.mm2]

FRAMES, BAD = 16, 5


def test_bad_sample_named_then_resumed_with_one_process(tmp_path):
    root = demo_data(tmp_path / 'data', frames=FRAMES, train_frames=8)
    cfg = write_config(tmp_path / 'cfg.py', root)
    env = {'KRADAR_EVAL_ONLY': '1'}
    reference = launch(cfg, tmp_path / 'reference', nproc=2, env=env)
    assert reference.returncode == 0, reference.describe()
    with open(osp.join(root, 'kradar_infos_val.pkl'), 'rb') as f:
        info = pickle.load(f)[BAD]
    path = osp.join(root, info['annos']['label_file'].split(',')[0], info['radar']['bev_path'])
    with open(path, 'rb') as f:
        data = f.read()
    with open(path, 'wb') as f:
        f.write(data[:90])
    try:
        bad = launch(cfg, tmp_path / 'wd', nproc=2, env=env)
    finally:
        with open(path, 'wb') as f:
            f.write(data)
    assert bad.returncode != 0
    assert 'kradar_plugin: dataset index {} (label_file {}'.format(BAD, info['annos']['label_file']) in bad.output
    assert path in bad.output and 'EOF: reading array header' in bad.output, bad.describe()
    again = launch(cfg, tmp_path / 'wd', nproc=1, env=env)
    assert again.returncode == 0, again.describe()
    assert 'kradar_plugin: resuming from the partial record' in again.output
    assert_same_predictions(again.collected(), reference.collected())
