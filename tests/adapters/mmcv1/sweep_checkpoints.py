"""Checkpoints of a real toy training run for the sweep tests, and the toy metric computed from a
checkpoint's weights by the definitions (not by the runner). ``trained`` (tests/adapters/mmcv1/conftest.py) trains
them once per session."""
import os.path as osp
import shutil
import sys

import torch

from .fixture_components import toy_features
from .launch_utils import ROOT, TOY, run

TRAIN = osp.join(ROOT, 'tools', 'train.py')
EPOCHS = 3


def train_checkpoints(work):
    """epoch_1..3.pth of a 3-epoch run of the toy model (one process, no validation)."""
    job = run([sys.executable, TRAIN, TOY, '--work-dir', str(work), '--no-doctor', '--no-validate',
               '--cfg-options', 'runner.max_epochs={}'.format(EPOCHS)], str(work))
    assert job.returncode == 0, job.describe()
    return str(work)


def ckpt_dir(trained, tmp_path, epochs=(1, 2, 3)):
    """A fresh directory with copies of the chosen epochs' checkpoints."""
    out = tmp_path / 'ckpts'
    out.mkdir()
    for e in epochs:
        shutil.copy(osp.join(trained, 'epoch_{}.pth'.format(e)), str(out / 'epoch_{}.pth'.format(e)))
    return out


def mae_of(path, num_samples=9):
    """The toy metric of a checkpoint's weights."""
    state = torch.load(path, map_location='cpu')['state_dict']
    w = state[[k for k in state if k.endswith('linear.weight')][0]][0]
    b = state[[k for k in state if k.endswith('linear.bias')][0]][0]
    errors = []
    for i in range(num_samples):
        x, target = toy_features(i)
        errors.append(abs(float(torch.from_numpy(x) @ w + b) - target))
    return sum(errors) / num_samples
