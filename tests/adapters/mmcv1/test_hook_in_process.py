"""EvalOnlyHook on the real mmcv runners in one process: IterBasedRunner, save_best untouched,
eval-first order, and the refusal when there is no evaluation hook."""
import glob
import json
import logging
import os.path as osp

import pytest
import torch
from mmcv.parallel import MMDataParallel, collate
from mmcv.runner import build_runner
from mmdet.core import EvalHook
from torch.utils.data import DataLoader

import kradar_plugin  # noqa: F401  (registers EvalOnlyRunnerConstructor, as custom_imports would)

from .fixture_components import ToyEvalDataset, ToyRegressor


def make_runner(work_dir, runner_type='IterBasedRunner', eval_mode='only', save_best=None, meta=None):
    model = MMDataParallel(ToyRegressor())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    cfg = dict(type=runner_type, constructor='EvalOnlyRunnerConstructor', eval_mode=eval_mode)
    cfg['max_iters' if runner_type == 'IterBasedRunner' else 'max_epochs'] = 4 if runner_type == \
        'IterBasedRunner' else 1
    logger = logging.getLogger('kradar_test_runner')
    runner = build_runner(cfg, default_args=dict(model=model, optimizer=optimizer, work_dir=str(work_dir),
                                                 logger=logger, meta=meta))
    runner.timestamp = 'test'
    by_epoch = runner_type != 'IterBasedRunner'
    runner.register_training_hooks(lr_config=dict(policy='fixed'), optimizer_config=dict(grad_clip=None),
                                   checkpoint_config=dict(interval=1, by_epoch=by_epoch),
                                   log_config=dict(interval=1, hooks=[dict(type='TextLoggerHook',
                                                                           by_epoch=by_epoch)]))
    val = DataLoader(ToyEvalDataset(num_samples=5), batch_size=2, collate_fn=lambda b: collate(b, 2))
    runner.register_hook(EvalHook(val, interval=100, start=50, by_epoch=by_epoch, save_best=save_best,
                                  rule='less' if save_best else None), priority='LOW')
    train = DataLoader(ToyEvalDataset(num_samples=6), batch_size=2, collate_fn=lambda b: collate(b, 2))
    return runner, train


def json_records(work_dir):
    records = []
    for path in glob.glob(osp.join(str(work_dir), '*.log.json')):
        with open(path) as f:
            records += [json.loads(line) for line in f if line.strip()]
    return [r for r in records if 'mode' in r]


def test_iter_based_eval_only_ignores_interval_and_start(tmp_path):
    runner, train = make_runner(tmp_path)
    runner.run([train], [('train', 1)])
    assert runner.iter == 0
    records = json_records(tmp_path)
    assert [r['mode'] for r in records] == ['val']
    assert records[0]['toy/num_samples'] == 5
    assert glob.glob(osp.join(str(tmp_path), '*.pth')) == []


def test_eval_only_leaves_save_best_files_alone(tmp_path):
    best = tmp_path / 'best_toy_mae_epoch_3.pth'
    best.write_bytes(b'previous best')
    meta = dict(hook_msgs=dict(best_ckpt=str(best), best_score=0.001))
    runner, train = make_runner(tmp_path, 'EpochBasedRunner', save_best='toy/mae', meta=meta)
    runner.run([train], [('train', 1)])
    assert runner.epoch == 0 and runner.iter == 0
    assert best.read_bytes() == b'previous best'
    assert sorted(osp.basename(p) for p in glob.glob(osp.join(str(tmp_path), '*.pth'))) == \
        ['best_toy_mae_epoch_3.pth']
    assert runner.meta['hook_msgs']['best_ckpt'] == str(best)


def test_eval_first_then_trains_epoch_based(tmp_path):
    runner, train = make_runner(tmp_path, 'EpochBasedRunner', eval_mode='first')
    runner.run([train], [('train', 1)])
    assert runner.epoch == 1 and runner.iter == 3
    modes = [r['mode'] for r in json_records(tmp_path)]
    assert modes[0] == 'val' and 'train' in modes[1:]
    assert osp.isfile(osp.join(str(tmp_path), 'epoch_1.pth'))


def test_eval_only_without_eval_hook_is_refused(tmp_path):
    runner, train = make_runner(tmp_path, 'EpochBasedRunner')
    runner._hooks = [h for h in runner._hooks if not isinstance(h, EvalHook)]
    with pytest.raises(RuntimeError, match='needs an evaluation hook'):
        runner.run([train], [('train', 1)])


def test_order_check_only_for_the_standard_collection():
    from mmcv.runner import DistEvalHook as MmcvDistEvalHook

    from kradar_plugin.adapters.mmcv1.eval_guard import uses_standard_collection
    loader = DataLoader(ToyEvalDataset(num_samples=3), batch_size=1)

    class ProjectEvalHook(MmcvDistEvalHook):  # e.g. a BEVFormer-style hook with its own collection
        def _do_evaluate(self, runner):
            return None

    assert uses_standard_collection(EvalHook(loader))
    assert uses_standard_collection(MmcvDistEvalHook(loader))
    assert not uses_standard_collection(ProjectEvalHook(loader))
