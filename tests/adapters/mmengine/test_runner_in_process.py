"""The runner adapters in one process (mmengine's real Runner on the toy model): settings, timeouts, a
project's own Runner subclass, and the errors a wrong setup gets."""
import datetime
import os.path as osp
import uuid

import pytest
from mmengine.config import Config
from mmengine.registry import RUNNERS
from mmengine.runner import Runner

from kradar_plugin.adapters.mmengine import EvalOnlyHook, EvalOnlyRunner
from kradar_plugin.adapters.mmengine.runner_builder import EvalSwitchMixin, dist_cfg_for_mmengine

from .helpers import TOY_CONFIG

pytestmark = [pytest.mark.mm2]


def toy_cfg(work_dir, **options):
    cfg = Config.fromfile(TOY_CONFIG)
    cfg.work_dir = str(work_dir)
    cfg.experiment_name = 'toy_' + uuid.uuid4().hex[:8]  # one logger/visualizer instance per runner
    cfg.merge_from_dict(options)
    return cfg


def hook_of(runner):
    hooks = [h for h in runner.hooks if isinstance(h, EvalOnlyHook)]
    assert len(hooks) == 1
    return hooks[0]


def test_timeouts_in_seconds_or_timedelta():
    assert dist_cfg_for_mmengine({'backend': 'nccl', 'timeout': 120}) == {'backend': 'nccl', 'timeout': 120.0}
    assert dist_cfg_for_mmengine({'timeout': datetime.timedelta(minutes=2)}) == {'timeout': 120.0}
    assert dist_cfg_for_mmengine({'backend': 'gloo'}) == {'backend': 'gloo'}
    with pytest.raises(ValueError, match='must be > 0 seconds'):
        dist_cfg_for_mmengine({'timeout': 0})
    with pytest.raises(ValueError, match='number of seconds or a datetime.timedelta'):
        dist_cfg_for_mmengine({'timeout': '30'})


def test_a_runner_built_in_python_takes_a_timedelta_timeout(tmp_path):
    # mmengine's own init_dist would fail on it (timedelta(seconds=timedelta)); configs built in Python (a
    # config file cannot hold a timedelta: mmengine's config dump refuses it) may carry one
    cfg = toy_cfg(tmp_path)
    runner = EvalOnlyRunner(
        model=cfg.model, work_dir=str(tmp_path), train_dataloader=cfg.train_dataloader,
        val_dataloader=cfg.val_dataloader, val_evaluator=cfg.val_evaluator, train_cfg=cfg.train_cfg,
        val_cfg=cfg.val_cfg, optim_wrapper=cfg.optim_wrapper, experiment_name=cfg.experiment_name,
        env_cfg=dict(dist_cfg=dict(backend='nccl', timeout=datetime.timedelta(seconds=90))))
    runner.train()
    assert hook_of(runner).evaluated == 1 and runner.iter == 0


def test_eval_only_in_process(tmp_path):
    runner = RUNNERS.build(toy_cfg(tmp_path, runner_type='EvalOnlyRunner', eval_samples=4))
    assert isinstance(runner, EvalOnlyRunner)
    runner.train()
    hook = hook_of(runner)
    assert (hook.mode, hook.eval_samples, hook.evaluated) == ('only', 4, 1)
    assert hook.metrics['toy/n'] == 4 and (hook.metrics['toy/first'], hook.metrics['toy/last']) == (0, 3)
    assert runner.iter == 0 and runner.epoch == 0
    assert not [p for p in osp.os.listdir(str(tmp_path)) if p.endswith('.pth')]


def test_a_project_runner_subclass_gets_the_switch(tmp_path):
    name = 'ProjectRunner_' + uuid.uuid4().hex[:6]

    @RUNNERS.register_module(name=name)
    class ProjectRunner(Runner):
        built = 0

        @classmethod
        def from_cfg(cls, cfg):
            ProjectRunner.built += 1
            return super(ProjectRunner, cls).from_cfg(cfg)

    runner = RUNNERS.build(toy_cfg(tmp_path, runner_type='EvalOnlyRunner', eval_mode='first',
                                   base_runner_type=name))
    assert isinstance(runner, ProjectRunner) and isinstance(runner, EvalSwitchMixin)
    assert ProjectRunner.built == 1
    runner.train()
    assert hook_of(runner).evaluated == 1 and runner.epoch == 2  # evaluated first, then trained


def test_wrong_settings_fail_before_anything_is_built(tmp_path):
    with pytest.raises(ValueError, match="eval_mode must be one of only, first, off, got 'sometimes'"):
        RUNNERS.build(toy_cfg(tmp_path, runner_type='EvalOnlyRunner', eval_mode='sometimes'))
    with pytest.raises(ValueError, match='eval_samples=0: expected a positive integer'):
        RUNNERS.build(toy_cfg(tmp_path, runner_type='EvalOnlyRunner', eval_samples=0))


def test_eval_only_without_a_validation_loop_is_an_error(tmp_path):
    cfg = toy_cfg(tmp_path, runner_type='EvalOnlyRunner')
    cfg.val_dataloader = cfg.val_evaluator = cfg.val_cfg = None
    runner = RUNNERS.build(cfg)
    with pytest.raises(RuntimeError, match="eval_mode='only' needs a validation loop"):
        runner.train()
