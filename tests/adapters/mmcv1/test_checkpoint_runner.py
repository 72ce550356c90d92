"""The checkpoint guard on the real mmcv runner in one process (EvalOnlyRunnerConstructor, real mmcv/mmdet
hooks): the report for load_from and resume, the threshold from the config and the environment, the
'initial weights' line, and EMA weights in the pre-training evaluation exactly as in the evaluation after
an epoch -- mmcv's EMAHook (swapped in after CheckpointHook saved) and mmdet's EMA hooks at priority 49
(swapped in before: the saved parameters are the averages)."""
import glob
import json
import logging
import os.path as osp

import mmdet.core  # noqa: F401  (registers mmdet's EMA hooks)
import pytest
import torch
from mmcv.parallel import MMDataParallel, collate
from mmcv.runner import build_runner
from mmdet.core import EvalHook
from torch.utils.data import DataLoader

import kradar_plugin  # noqa: F401  (registers EvalOnlyRunnerConstructor, as custom_imports would)
from kradar_plugin.distributed.checkpoint_report import REPORT_FILE, CheckpointLoadError
from kradar_plugin.distributed import run_context

from .fixture_components import ToyEvalDataset, ToyRegressor


class Capture(logging.Handler):
    def __init__(self):
        super(Capture, self).__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append((record.levelno, record.getMessage()))


def make_runner(work_dir, eval_mode='off', custom_hooks=None, min_loaded=None, seed=0, by_epoch=True):
    torch.manual_seed(seed)
    model = MMDataParallel(ToyRegressor())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    cfg = dict(type='EpochBasedRunner' if by_epoch else 'IterBasedRunner', constructor='EvalOnlyRunnerConstructor',
               eval_mode=eval_mode)
    cfg['max_epochs' if by_epoch else 'max_iters'] = 1 if by_epoch else 2
    if min_loaded is not None:
        cfg['min_loaded'] = min_loaded
    logger = logging.getLogger('kradar_test_ckpt_runner')
    logger.setLevel(logging.INFO)
    capture = Capture()
    logger.handlers = [capture]
    logger.propagate = False
    runner = build_runner(cfg, default_args=dict(model=model, optimizer=optimizer, work_dir=str(work_dir),
                                                 logger=logger, meta=None))
    runner.timestamp = 'test'
    runner.register_training_hooks(lr_config=dict(policy='fixed'), optimizer_config=dict(grad_clip=None),
                                   checkpoint_config=dict(interval=1 if by_epoch else 2, by_epoch=by_epoch),
                                   log_config=dict(interval=1, hooks=[dict(type='TextLoggerHook',
                                                                           by_epoch=by_epoch)]),
                                   custom_hooks_config=custom_hooks)
    val = DataLoader(ToyEvalDataset(num_samples=5), batch_size=2, collate_fn=lambda b: collate(b, 2))
    runner.register_hook(EvalHook(val, interval=1 if by_epoch else 2, by_epoch=by_epoch), priority='LOW')
    train = DataLoader(ToyEvalDataset(num_samples=6), batch_size=2, collate_fn=lambda b: collate(b, 2))
    runner.kradar_capture = capture
    return runner, train


def val_records(work_dir):
    records = []
    for path in glob.glob(osp.join(str(work_dir), '*.log.json')):
        with open(path) as f:
            records += [json.loads(line) for line in f if line.strip()]
    return [r for r in records if r.get('mode') == 'val']


def messages(runner):
    return '\n'.join(m for _, m in runner.kradar_capture.lines)


def train_one_epoch(work_dir, custom_hooks=None):
    runner, train = make_runner(work_dir, custom_hooks=custom_hooks)
    runner.run([train], [('train', 1)])
    (record,) = val_records(work_dir)
    assert record['epoch'] == 1
    return osp.join(str(work_dir), 'epoch_1.pth'), record['toy/mae']


def eval_only(work_dir, checkpoint, custom_hooks=None, **kwargs):
    runner, train = make_runner(work_dir, eval_mode='only', custom_hooks=custom_hooks, seed=1, **kwargs)
    runner.load_checkpoint(checkpoint)
    runner.run([train], [('train', 1)])
    (record,) = val_records(work_dir)
    assert record['epoch'] == 0 and runner.iter == 0
    return runner, record['toy/mae']


# mmcv's EMAHook at NORMAL priority is registered after CheckpointHook: the checkpoint holds the raw
# weights as parameters and the averages as ema_* buffers. mmdet's configs put their EMA hooks at 49,
# before CheckpointHook (50): the averages are swapped in before saving.
MMCV_EMA = [dict(type='EMAHook', momentum=0.5, warm_up=1)]
MMDET_EXP_EMA = [dict(type='ExpMomentumEMAHook', momentum=0.2, total_iter=2, priority=49)]
MMDET_LINEAR_EMA = [dict(type='LinearMomentumEMAHook', momentum=0.2, warm_up=2, priority=49)]


@pytest.mark.parametrize('hooks,evaluated', [
    (MMCV_EMA, "ema (the checkpoint's ema_* entries)"),
    (MMDET_EXP_EMA, 'ema (the parameters: saved after the swap)'),
    (MMDET_LINEAR_EMA, 'ema (the parameters: saved after the swap)')])
def test_eval_only_scores_what_the_epoch_end_evaluation_scored(tmp_path, hooks, evaluated):
    checkpoint, after_epoch = train_one_epoch(tmp_path / 'train', hooks)
    saved = torch.load(checkpoint)['state_dict']
    assert sorted(k for k in saved if k.startswith('ema_')) == ['ema_linear_bias', 'ema_linear_weight']
    runner, before_training = eval_only(tmp_path / 'eval', checkpoint, hooks)
    assert before_training == after_epoch
    report = json.loads((tmp_path / 'eval' / REPORT_FILE).read_text())
    assert report['ema'] == {'keys': 2, 'evaluated': evaluated}
    # the swap is undone: the model holds the loaded parameters again
    assert torch.equal(runner.model.module.linear.weight.data, saved['linear.weight'])


def test_iteration_based_runner_evaluates_raw_weights_before_and_after(tmp_path):
    """IterBasedRunner never calls after_train_epoch: EMAHook never swaps, every evaluation scores the raw
    weights, and so does the pre-training one."""
    runner, train = make_runner(tmp_path / 'train', custom_hooks=MMCV_EMA, by_epoch=False)
    runner.run([train], [('train', 2)])
    (record,) = val_records(tmp_path / 'train')
    checkpoint = osp.join(str(tmp_path / 'train'), 'iter_2.pth')
    assert any(k.startswith('ema_') for k in torch.load(checkpoint)['state_dict'])
    runner, train = make_runner(tmp_path / 'eval', eval_mode='only', custom_hooks=MMCV_EMA, seed=1, by_epoch=False)
    runner.load_checkpoint(checkpoint)
    runner.run([train], [('train', 2)])
    (before,) = val_records(tmp_path / 'eval')
    assert before['toy/mae'] == record['toy/mae'] and runner.iter == 0
    assert run_context.current().checkpoint_report['ema']['evaluated'].startswith('raw (IterBasedRunner')


def test_without_an_ema_hook_the_loaded_parameters_are_scored(tmp_path):
    checkpoint, after_epoch = train_one_epoch(tmp_path / 'train', MMCV_EMA)
    runner, raw = eval_only(tmp_path / 'eval', checkpoint)
    assert raw != after_epoch  # the raw weights differ from their average
    assert 'holds 2 EMA entries but the config has no EMA hook' in messages(runner)
    # the raw weights' score, computed independently from the checkpoint's parameters
    saved = torch.load(checkpoint)['state_dict']
    from .fixture_components import toy_features
    errors = []
    for i in range(5):
        x, target = toy_features(i)
        pred = float(torch.from_numpy(x) @ saved['linear.weight'][0] + saved['linear.bias'][0])
        errors.append(abs(pred - target))
    assert raw == pytest.approx(sum(errors) / 5, abs=1e-5)  # the .log.json keeps 5 decimals


def test_ema_hook_without_ema_entries_scores_the_parameters(tmp_path):
    checkpoint, after_epoch = train_one_epoch(tmp_path / 'train')  # trained without EMA
    runner, score = eval_only(tmp_path / 'eval', checkpoint, MMCV_EMA)
    assert score == after_epoch
    assert 'EMAHook is configured but the checkpoint holds no EMA entries' in messages(runner)


def test_report_for_load_from_and_resume(tmp_path):
    checkpoint, _ = train_one_epoch(tmp_path / 'train')
    runner, train = make_runner(tmp_path / 'resume')
    runner.resume(checkpoint)  # mmcv's resume goes through runner.load_checkpoint and reads meta
    assert runner.epoch == 1
    context = run_context.current()   # the run this runner's constructor started
    assert context.checkpoint_report['loaded_fraction'] == 1.0
    assert context.checkpoint_meta['epoch'] == 1  # the checkpoint-meta hand-off still sees it
    assert 'loaded 100.0% of 5 parameters (2/2 parameter tensors, 0/0 buffers) from ' + checkpoint in \
        messages(runner)
    assert json.loads((tmp_path / 'resume' / REPORT_FILE).read_text())['checkpoint'] == checkpoint


def renamed_checkpoint(tmp_path):
    checkpoint, _ = train_one_epoch(tmp_path / 'train')
    ck = torch.load(checkpoint)
    ck['state_dict'] = dict(('fc.' + k.split('.', 1)[1], v) for k, v in ck['state_dict'].items())
    path = str(tmp_path / 'renamed.pth')
    torch.save(ck, path)
    return path


def test_threshold_from_config_and_environment(tmp_path, monkeypatch):
    path = renamed_checkpoint(tmp_path)
    runner, _ = make_runner(tmp_path / 'a', eval_mode='only')
    with pytest.raises(CheckpointLoadError, match="renamed module: checkpoint 'fc' = model 'linear'"):
        runner.load_checkpoint(path)
    runner, train = make_runner(tmp_path / 'b', eval_mode='only', min_loaded=0)  # runner.min_loaded=0
    runner.load_checkpoint(path)
    runner.run([train], [('train', 1)])
    assert len(val_records(tmp_path / 'b')) == 1
    monkeypatch.setenv('KRADAR_MIN_LOADED', '0')  # the environment overrides the config
    runner, _ = make_runner(tmp_path / 'c', eval_mode='only', min_loaded=0.9)
    runner.load_checkpoint(path)
    monkeypatch.setenv('KRADAR_MIN_LOADED', '2')
    with pytest.raises(ValueError, match="KRADAR_MIN_LOADED='2'"):
        make_runner(tmp_path / 'd', eval_mode='only')


def test_eval_only_without_checkpoint_says_so(tmp_path):
    runner, train = make_runner(tmp_path, eval_mode='only')
    runner.run([train], [('train', 1)])
    text = messages(runner)
    assert 'no checkpoint loaded (load_from/resume_from not set): evaluating the initial weights' in text
    assert not osp.exists(osp.join(str(tmp_path), REPORT_FILE))
    assert 'kradar_plugin preflight (1 rank(s))' in text


def test_a_check_that_cannot_run_warns_and_the_run_goes_on(tmp_path):
    """The preflight never crashes a rank (which would leave the others in the all_gather) and never blocks
    eval-only for a training set it does not use: here the training dataset cannot build sample 0 (e.g. its
    files are not on this machine); the worker probe and the batch measurement WARN, the evaluation runs."""
    runner, _ = make_runner(tmp_path, eval_mode='only')
    broken = DataLoader(ToyEvalDataset(num_samples=6), batch_size=2, collate_fn=lambda b: collate(b, 2),
                        num_workers=1, multiprocessing_context='fork')
    broken.dataset.data_infos[0] = None  # sample 0 cannot be built
    runner.run([broken], [('train', 1)])
    text = messages(runner)
    results = dict(((r.name, r.status), r.reason) for r in runner._hooks[-1].preflight_results)
    assert results[('worker-cuda', 'WARN')] == ("train: the probe worker (start method fork) could not load a "
                                                "sample: TypeError: 'NoneType' object is not subscriptable")
    assert results[('shm-batch', 'WARN')].startswith('one batch could not be checked: TypeError')
    assert 'kradar_plugin preflight: OK (0 fail' in text
    assert len(val_records(tmp_path)) == 1
