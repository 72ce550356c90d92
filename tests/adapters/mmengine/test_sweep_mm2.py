"""The checkpoint sweep on mmengine's real Runner, loops, hooks and DDP (toy model, gloo on CPU), launched by
mmdet3d 1.4's unmodified tools/train.py with 2 processes and asked for by the environment only; each
checkpoint's metrics equal a separate eval-only launch of it; a checkpoint that loads too little is recorded
and the sweep goes on; our train entry's --checkpoints."""
import json
import os.path as osp
import shutil

import pytest
import torch

from .helpers import TOY_CONFIG, launch

pytestmark = [pytest.mark.launch, pytest.mark.mm2]


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """epoch_1.pth, epoch_2.pth of a real 2-epoch run of the toy model (one process)."""
    work = tmp_path_factory.mktemp('mm2_sweep_train')
    job = launch(TOY_CONFIG, work / 'train', nproc=1, args=['--cfg-options', 'train_cfg.val_interval=10'])
    assert job.returncode == 0, job.describe()
    assert {'epoch_1.pth', 'epoch_2.pth'} <= set(job.checkpoints()), job.checkpoints()
    return job.work_dir


def toy(job):
    return [job.metrics(r, 'toy/') for r in job.val_records('toy/')]


def record(job):
    with open(osp.join(job.work_dir, 'sweep.json')) as f:
        return json.load(f)


def test_environment_sweep_equals_separate_eval_only_launches(trained, tmp_path):
    ckpts = tmp_path / 'ckpts'
    ckpts.mkdir()
    for e in (1, 2):
        shutil.copy(osp.join(trained, 'epoch_{}.pth'.format(e)), str(ckpts / 'epoch_{}.pth'.format(e)))
    state = torch.load(str(ckpts / 'epoch_1.pth'), map_location='cpu')
    state['state_dict'] = dict(('other.' + k, v) for k, v in state['state_dict'].items())
    torch.save(state, str(ckpts / 'epoch_3.pth'))          # loads nothing: refused, recorded
    job = launch(TOY_CONFIG, tmp_path / 'sweep', nproc=2, env={
        'KRADAR_EVAL_ONLY': '1', 'KRADAR_EVAL_CHECKPOINTS': str(ckpts / 'epoch_*.pth')})
    assert job.returncode != 0, job.describe()             # one checkpoint failed
    rec = record(job)
    assert [(e['stem'], e['status'], e['stage']) for e in rec['checkpoints']] == [
        ('epoch_1', 'ok', None), ('epoch_2', 'ok', None), ('epoch_3', 'failed', 'load')]
    assert "only 0.0% of the model's" in rec['checkpoints'][2]['error']
    assert job.train_records() == [] and osp.isfile(osp.join(job.work_dir, 'eval_results', 'results_epoch_2.pkl'))
    swept = toy(job)
    for n, e in enumerate((1, 2)):
        single = launch(TOY_CONFIG, tmp_path / 'single{}'.format(e), nproc=2, args=[
            '--cfg-options', 'runner_type=EvalOnlyRunner', 'load_from=' + str(ckpts / 'epoch_{}.pth'.format(e))])
        assert single.returncode == 0, single.describe()
        assert toy(single) == [swept[n]]
        assert abs(rec['checkpoints'][n]['metrics']['toy/mean'] - swept[n]['toy/mean']) < 1e-9
    assert rec['best']['stem'] == 'epoch_1'                # toy/mean falls with training ('greater' is better)


def test_our_train_entry_checkpoints_flag(trained, tmp_path):
    job = launch(TOY_CONFIG, tmp_path / 'ours', nproc=1, module='kradar_plugin.adapters.mmengine.train',
                 args=['--eval-only', '--checkpoints', osp.join(trained, 'epoch_*.pth'), '--eval-key', 'toy/mean:min'])
    assert job.returncode == 0, job.describe()
    rec = record(job)
    assert [e['stem'] for e in rec['checkpoints']] == ['epoch_1', 'epoch_2'] and rec['best']['stem'] == 'epoch_2'
