"""``EvalOnlyHook`` (mmengine ``HOOKS``): evaluate before the first training iteration, then stop
(eval-only) or go on training (eval-first), on the real runner, hooks, DDP wrapper, data pipeline and
distributed result collection of the training job.

mmengine validates only after an epoch/interval (``val_begin=0`` does not validate first). This hook's
priority is ``LOWEST``, so its ``before_train`` comes after every other hook's and after the checkpoint
was loaded (``load_from``/``resume``): it runs ``runner.val_loop.run()`` once -- metrics logged like any
evaluation (``Epoch(val) [0][N/N]``, step 0 in the visualizer) -- with, for that one evaluation only,
``CheckpointHook.save_best`` off (no ``best_*.pth`` written or removed) and ``ParamSchedulerHook``'s
metric-driven step skipped. Eval-only then sets ``runner.train_loop.stop_training``: zero training
iterations, no checkpoint, ``after_train``/``after_run`` hooks still run. In every mode (also ``'off'``)
the guards of ``guard`` apply and ``eval_samples`` restricts every evaluation to the first N samples.
With a checkpoint sweep (``sweep``, eval-only) the one evaluation becomes one per checkpoint (``sweep``);
``after_run`` then ends the process with a non-zero exit code unless every checkpoint succeeded.
"""
from mmengine.hooks import CheckpointHook, Hook, ParamSchedulerHook
from mmengine.registry import HOOKS

from kradar_plugin import runner_options
from .eval_guard import check_collection, guard_loop, guard_metrics
from .subset import subset_val_loop


@HOOKS.register_module()
class EvalOnlyHook(Hook):
    """Evaluate once before training; ``mode``: 'only' | 'first' | 'off'; ``eval_samples``: first N."""

    priority = 'LOWEST'

    def __init__(self, mode='only', eval_samples=None, guard=True, sweep=None, min_loaded=None):
        self.mode = runner_options.check('eval_mode', mode)
        self.eval_samples = runner_options.check('eval_samples', eval_samples)
        self.guard = guard
        self.evaluated = 0
        self.metrics = None
        self.sweep = sweep if sweep is not None and sweep.active else None
        if self.sweep is not None and self.mode != 'only':
            raise ValueError('a checkpoint sweep is eval-only: eval_mode={!r} cannot sweep'.format(self.mode))
        self.min_loaded = min_loaded
        self.sweep_result = None

    def before_train(self, runner):
        loop = runner.val_loop
        if loop is None:
            if self.mode != 'off' or self.eval_samples is not None:
                raise RuntimeError(
                    'eval_mode={!r} needs a validation loop, but the runner has none: give the config '
                    'val_dataloader, val_evaluator and val_cfg'.format(self.mode))
            return
        if self.eval_samples is not None:
            subset_val_loop(runner, loop, self.eval_samples)
        if self.guard:
            check_collection(loop.dataloader)
            guard_metrics(runner, loop)
            guard_loop(loop, runner)
        if self.mode == 'off':
            return
        if self.sweep is not None:
            from .sweep import run_sweep
            min_loaded = runner_options.resolve(dict(min_loaded=self.min_loaded), ('min_loaded',))['min_loaded']
            self.sweep_result = run_sweep(self, runner, loop, self.sweep, min_loaded)
            self.stop_training(runner)
            return
        self.metrics = self.evaluate_now(runner, loop)
        if self.mode == 'only':
            self.stop_training(runner)

    def after_run(self, runner):
        """A sweep with a failed checkpoint ends the process with a non-zero exit code (every rank)."""
        if self.sweep_result is not None:
            message = self.sweep_result.exit_message()
            if message:
                raise SystemExit(message if self.sweep_result.rank == 0 else 1)

    def evaluate_now(self, runner, loop):
        """One ``loop.run()`` before training, without best-checkpoint saving or scheduler steps."""
        runner.logger.info('kradar_plugin eval-%s: evaluating %d validation samples before training',
                           self.mode, len(loop.dataloader.dataset))
        checkpoint_hooks = [h for h in runner.hooks if isinstance(h, CheckpointHook)]
        scheduler_hooks = [h for h in runner.hooks if isinstance(h, ParamSchedulerHook)]
        saved_best = [h.save_best for h in checkpoint_hooks]
        for hook in checkpoint_hooks:
            hook.save_best = None
        for hook in scheduler_hooks:
            hook.after_val_epoch = _no_step
        try:
            metrics = loop.run()
        finally:
            for hook, value in zip(checkpoint_hooks, saved_best):
                hook.save_best = value
            for hook in scheduler_hooks:
                if hook.__dict__.get('after_val_epoch') is _no_step:
                    del hook.after_val_epoch
        self.evaluated += 1
        return metrics

    @staticmethod
    def stop_training(runner):
        """Zero training iterations from now on; ``after_train``/``after_run`` hooks still run."""
        runner.train_loop.stop_training = True
        runner.logger.info('kradar_plugin eval-only: done; stopping before the first training iteration '
                           '(no checkpoint written)')


def _no_step(runner, metrics=None):
    """Stands in for ``ParamSchedulerHook.after_val_epoch`` during the evaluation before training."""
    return None
