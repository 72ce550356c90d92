"""The checkpoint sweep on the mmcv 1.x stack through real launches (our tools/train.py and dist_train.sh,
torchrun, 2 gloo processes on CPU, the real runner, hooks and DDP wrapper): every checkpoint of a training
run evaluated in one launch, each metric equal to the toy metric computed here from that checkpoint's
weights; a truncated and a refused checkpoint recorded with their errors while the sweep goes on; a failing
``dataset.evaluate`` recorded; the setting and the config key; watch mode across a restart."""
import glob
import json
import os.path as osp
import pickle
import shutil
import sys

import pytest
import torch

from tests import launching
from .launch_utils import TOY, dist_train, run
from .sweep_checkpoints import TRAIN, ckpt_dir, mae_of

pytestmark = [pytest.mark.launch]


def train_py(work_dir, *flags, env=None):
    """One process, no launcher: ``python tools/train.py TOY --work-dir W FLAGS``."""
    return run([sys.executable, TRAIN, TOY, '--work-dir', str(work_dir), '--no-doctor'] + list(flags),
               str(work_dir), env)


def sweep_json(job):
    with open(osp.join(job.work_dir, 'sweep.json')) as f:
        return json.load(f)


@launching.on_torchrun_stacks('test_echofusion_sweep.py::test_environment_sweep_with_echofusions_train_script; '
                              'a failure recorded: test_failing_evaluate_is_recorded_and_stop_on_error_ends_the_sweep')
def test_two_process_sweep_every_checkpoint_once_failures_recorded(trained, tmp_path):
    ckpts = ckpt_dir(trained, tmp_path)
    data = open(str(ckpts / 'epoch_3.pth'), 'rb').read()
    with open(str(ckpts / 'epoch_4.pth'), 'wb') as f:    # truncated: cannot be read
        f.write(data[:len(data) // 3])
    state = torch.load(str(ckpts / 'epoch_2.pth'))
    state['state_dict'] = dict((k.replace('linear.', 'fc.'), v) for k, v in state['state_dict'].items())
    torch.save(state, str(ckpts / 'epoch_5.pth'))         # loads 0%: refused on every rank
    job = dist_train(tmp_path / 'sweep', 2, '--eval-only', '--no-doctor', '--checkpoints',
                     str(ckpts / 'epoch_*.pth'), str(ckpts / 'epoch_1.pth'))
    assert job.returncode != 0, job.describe()              # not all succeeded
    assert 'kradar_plugin sweep: 2 of 5 checkpoint(s) failed' in job.output, job.describe()
    assert job.output.count('Start running') == 1           # runner, model, DDP, loaders built once
    record = sweep_json(job)
    assert [(e['stem'], e['status'], e['stage']) for e in record['checkpoints']] == [
        ('epoch_1', 'ok', None), ('epoch_2', 'ok', None), ('epoch_3', 'ok', None),
        ('epoch_4', 'failed', 'load'), ('epoch_5', 'failed', 'load')]
    assert 'cannot read checkpoint' in record['checkpoints'][3]['error']
    assert "only 0.0% of the model's 5 parameter elements" in record['checkpoints'][4]['error']
    expected = dict(('epoch_{}'.format(e), mae_of(str(ckpts / 'epoch_{}.pth'.format(e)))) for e in (1, 2, 3))
    for entry in record['checkpoints'][:3]:
        assert abs(entry['metrics']['toy/mae'] - expected[entry['stem']]) < 1e-5, entry
        assert entry['loaded_fraction'] == 1.0 and entry['epoch'] == int(entry['stem'][-1])
        assert entry['results_file'] == osp.join(job.work_dir, 'eval_results', 'results_{}.pkl'.format(entry['stem']))
        with open(entry['results_file'], 'rb') as f:
            assert [r['sample_idx'] for r in pickle.load(f)] == list(range(9))
    best = min(expected, key=expected.get)                  # toy/mae: lower is better
    assert record['eval_key'] == 'toy/mae' and record['rule'] == 'less' and record['best']['stem'] == best
    assert [(r['epoch'], round(r['toy/mae'], 4)) for r in job.val_records()] == [
        (e, round(expected['epoch_{}'.format(e)], 4)) for e in (1, 2, 3)]   # logged as Epoch(val) [E]
    assert job.train_records() == [] and job.checkpoints() == []
    assert 'checkpoint  epoch  status' in job.output and osp.getsize(osp.join(job.work_dir, 'sweep_ap.png')) > 1000


@launching.on_torchrun_stacks('test_echofusion_sweep.py::test_environment_sweep_with_echofusions_train_script')
def test_setting_and_key_with_an_unmodified_command_line(trained, tmp_path):
    ckpts = ckpt_dir(trained, tmp_path)
    # the config's load_from (a pretrained backbone, say) is not loaded: each checkpoint of the sweep is
    job = train_py(tmp_path / 'env', '--cfg-options', 'load_from=/not/there/pretrained.pth',
                   env={'KRADAR_EVAL_ONLY': '1', 'KRADAR_EVAL_KEY': 'toy/mae:max',
                        'KRADAR_EVAL_CHECKPOINTS': '{0}/epoch_2.pth,{0}/epoch_1.pth {0}/epoch_3.pth'.format(ckpts)})
    assert job.returncode == 0, job.describe()
    assert 'kradar_plugin sweep: load_from=/not/there/pretrained.pth not loaded' in job.output
    record = sweep_json(job)
    assert [e['stem'] for e in record['checkpoints']] == ['epoch_1', 'epoch_2', 'epoch_3']
    maes = dict((e['stem'], e['metrics']['toy/mae']) for e in record['checkpoints'])
    assert record['best']['stem'] == max(maes, key=maes.get) and record['all_succeeded'] is True


def test_failing_evaluate_is_recorded_and_stop_on_error_ends_the_sweep(trained, tmp_path):
    ckpts = ckpt_dir(trained, tmp_path, (1, 2))
    options = ['--cfg-options', 'data.val.fail_in=evaluate', 'runner.eval_checkpoints={}/epoch_*.pth'.format(ckpts)]
    job = dist_train(tmp_path / 'goes_on', 2, '--eval-only', '--no-doctor', *options)
    assert job.returncode != 0, job.describe()
    record = sweep_json(job)
    assert [(e['stem'], e['stage']) for e in record['checkpoints']] == [('epoch_1', 'evaluate'),
                                                                       ('epoch_2', 'evaluate')]
    assert all('planted evaluate failure' in e['error'] and 'kradar-eval' in e['error'] for e in record['checkpoints'])
    assert sorted(osp.basename(p) for p in glob.glob(osp.join(job.work_dir, 'eval_results', '*.pkl'))) == [
        'results_epoch_1.pkl', 'results_epoch_2.pkl']       # saved before the failing evaluate
    job = dist_train(tmp_path / 'stops', 2, '--eval-only', '--no-doctor', '--sweep-stop-on-error', *options)
    assert job.returncode != 0, job.describe()
    assert [e['stem'] for e in sweep_json(job)['checkpoints']] == ['epoch_1']
    assert 'stopped at the first failure' in job.output


def test_watch_mode_skips_what_a_previous_watcher_did_and_stops_at_the_final_epoch(trained, tmp_path):
    ckpts = ckpt_dir(trained, tmp_path, (1, 2))
    work = tmp_path / 'watch'
    first = train_py(work, '--eval-only', '--watch', str(ckpts), '--watch-poll', '0.5', '--watch-idle', '2')
    assert first.returncode == 0, first.describe()
    assert 'stopped watching: no new checkpoint for 2 s' in first.output
    assert [e['stem'] for e in sweep_json(first)['checkpoints']] == ['epoch_1', 'epoch_2']
    shutil.copy(osp.join(trained, 'epoch_3.pth'), str(ckpts / 'epoch_3.pth'))
    second = train_py(work, '--eval-only', '--watch', str(ckpts), '--watch-poll', '0.5', '--watch-idle', '600',
                      '--watch-final-epoch', '3')
    assert second.returncode == 0, second.describe()
    assert '2 checkpoint(s) already evaluated' in second.output
    assert 'stopped watching: the checkpoint of the final epoch 3 is evaluated' in second.output
    assert [r['epoch'] for r in second.val_records() if r['epoch'] == 3] == [3]
    assert 'loading {}'.format(ckpts / 'epoch_1.pth') not in second.output
    assert [e['stem'] for e in sweep_json(second)['checkpoints']] == ['epoch_1', 'epoch_2', 'epoch_3']
