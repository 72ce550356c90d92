"""The checkpoint report through real launches (torchrun, 2 gloo processes on CPU, our tools/train.py): a
checkpoint saved from the DDP wrapper by a real 2-process run (every key prefixed with ``module.``) loads
100% in an eval-only run; a renamed head and a truncated file stop the job on every rank before the
evaluation; a normal training run with load_from reports too; and a model with an unused head really fails
under DDP, as the preflight/doctor check predicts."""
import glob
import json
import os.path as osp
import sys

import torch

from kradar_plugin.distributed.checkpoint_report import REPORT_FILE

from tests import launching

from .fixture_components import toy_features
from .launch_utils import CONFIGS, ROOT, dist_train, run

import pytest  # noqa: E402

pytestmark = [pytest.mark.launch]

SAVE_WRAPPED = osp.join(CONFIGS, 'toy_save_wrapped.py')


@pytest.fixture(scope='module')
def ddp_saved(tmp_path_factory):
    """One real 2-process training run that saved its DDP wrapper's state dict (shared by the tests here:
    each reads it, none changes it)."""
    job = dist_train(tmp_path_factory.mktemp('ddp_saved') / 'train', 2, config=SAVE_WRAPPED)
    assert job.returncode == 0, job.describe()
    path = osp.join(job.work_dir, 'wrapped_state_dict.pth')
    state = torch.load(path)['state_dict']
    assert sorted(state) == ['module.linear.bias', 'module.linear.weight']  # saved from the DDP wrapper
    return path, state


def mae_of(state, num_samples=9):
    """The toy metric of these weights, computed here from the definitions (not by the runner)."""
    w, b = state['module.linear.weight'][0], state['module.linear.bias'][0]
    errors = []
    for i in range(num_samples):
        x, target = toy_features(i)
        errors.append(abs(float(torch.from_numpy(x) @ w + b) - target))
    return sum(errors) / num_samples


def test_ddp_saved_checkpoint_is_fully_loaded_in_eval_only(ddp_saved, tmp_path):
    path, state = ddp_saved
    job = dist_train(tmp_path / 'eval', 2, '--eval-only', '--cfg-options', 'load_from=' + path)
    assert job.returncode == 0, job.describe()
    line = 'loaded 100.0% of 5 parameters (2/2 parameter tensors, 0/0 buffers) from ' + path
    assert line in job.output
    assert job.output.count("removed the 'module.' wrapper prefix from 2 keys") == 1  # one warning, rank 0
    with open(osp.join(job.work_dir, REPORT_FILE)) as f:
        report = json.load(f)
    assert report['loaded_fraction'] == 1.0 and report['checkpoint'] == path and report['ok'] is True
    assert report['modules'] == {'linear': {
        'parameters': {'loaded': 2, 'total': 2, 'loaded_elements': 5, 'total_elements': 5},
        'buffers': {'loaded': 0, 'total': 0, 'loaded_elements': 0, 'total_elements': 0},
        'missing': 0, 'shape_mismatches': 0, 'unexpected': 0}}
    (val,) = job.val_records()
    assert abs(val['toy/mae'] - mae_of(state)) < 1e-5  # the loaded weights were evaluated
    # the preflight ran on both ranks' real loaders before evaluating (healthy)
    assert 'kradar_plugin preflight (2 rank(s))' in job.output and 'kradar_plugin preflight: OK' in job.output
    assert 'val: DistributedSampler (num_replicas=2): mmcv\'s result collection gives samples 0..8' in job.output
    logs = glob.glob(osp.join(job.work_dir, '*.log'))  # the log file carries the report line too
    assert len(logs) == 1 and line in open(logs[0]).read()


def test_renamed_head_stops_every_rank_before_evaluating(ddp_saved, tmp_path):
    path, state = ddp_saved
    renamed = dict((k.replace('module.linear.', 'module.fc.'), v) for k, v in state.items())
    bad = str(tmp_path / 'renamed.pth')
    torch.save({'state_dict': renamed}, bad)
    job = dist_train(tmp_path / 'eval', 2, '--eval-only', '--cfg-options', 'load_from=' + bad)
    assert job.returncode != 0, job.describe()
    for rank in (0, 1):
        assert "[rank %d/2] only 0.0%% of the model's 5 parameter elements" % rank in job.output, job.describe()
    assert "renamed module: checkpoint 'fc' = model 'linear'" in job.output
    assert job.val_records() == [] and 'Epoch(val)' not in job.output


@launching.on_torchrun_stacks('test_renamed_head_stops_every_rank_before_evaluating (the same refusal on every rank)')
def test_truncated_checkpoint_names_the_file_on_every_rank(ddp_saved, tmp_path):
    path, _ = ddp_saved
    with open(path, 'rb') as f:
        data = f.read()
    cut = str(tmp_path / 'cut.pth')
    with open(cut, 'wb') as f:
        f.write(data[:len(data) // 3])
    job = dist_train(tmp_path / 'eval', 2, '--eval-only', '--cfg-options', 'load_from=' + cut)
    assert job.returncode != 0, job.describe()
    for rank in (0, 1):
        assert '[rank %d/2] cannot read checkpoint %s (%d bytes)' % (rank, cut, len(data) // 3) in job.output
    assert 'the file is truncated' in job.output and job.val_records() == []


def test_payload_checkpoint_as_load_from_is_refused_and_never_runs(tmp_path):
    """A checkpoint whose meta holds an os.system call, as eval-only load_from: every rank stops with the
    loader's one error (the global, the file, the opt-in) before evaluating; the payload never ran."""
    from tests.loading.hostile_checkpoints import weights_with_payload
    marker = tmp_path / 'payload_ran'
    bad = weights_with_payload(str(tmp_path / 'epoch_12.pth'), str(marker))
    job = dist_train(tmp_path / 'eval', 2, '--eval-only', '--cfg-options', 'load_from=' + bad)
    assert job.returncode != 0, job.describe()
    for rank in (0, 1):
        assert '[rank %d/2] cannot read checkpoint %s' % (rank, bad) in job.output, job.describe()
    assert 'refused to load the global os.system (met in archive/data.pkl' in job.output
    assert '--trust-checkpoint' in job.output
    assert not marker.exists() and job.val_records() == [] and 'Epoch(val)' not in job.output


def test_normal_training_with_load_from_reports_too(ddp_saved, tmp_path):
    path, _ = ddp_saved
    work_dir = tmp_path / 'finetune'
    job = run([sys.executable, osp.join(ROOT, 'tools', 'train.py'), osp.join(CONFIGS, 'toy.py'), '--work-dir',
               str(work_dir), '--cfg-options', 'load_from=' + path], str(work_dir))
    assert job.returncode == 0, job.describe()
    assert 'loaded 100.0% of 5 parameters' in job.output
    assert osp.isfile(osp.join(str(work_dir), REPORT_FILE))
    assert 'epoch_1.pth' in job.checkpoints() and len(job.train_records()) > 0
    assert 'kradar_plugin preflight' not in job.output  # normal training: no preflight unless asked


def test_unused_head_really_fails_under_ddp(tmp_path):
    """What the unused-params check predicts, on the real DDP wrapper: the second iteration fails."""
    job = dist_train(tmp_path / 'unused', 2, '--cfg-options', 'model.type=ToyTwoHeadRegressor', config=SAVE_WRAPPED)
    assert job.returncode != 0, job.describe()
    assert 'Expected to have finished reduction in the prior iteration' in job.output, job.describe()
