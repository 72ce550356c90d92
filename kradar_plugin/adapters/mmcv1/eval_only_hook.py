"""``EvalOnlyHook``: evaluate before the first training iteration, then stop (eval-only) or go on
training (eval-first), on the real runner, hooks, DDP wrapper and data pipeline of the training job.

Registered at ``LOWEST`` priority so that its ``before_run`` comes after every other hook's: the weights
are loaded (``load_from``), fp16/optimizer hooks have wrapped the model, and the EvalHooks and loggers are
set up. For every ``EvalHook``/``DistEvalHook`` (mmcv's base class covers mmdet's and mmdet3d's):
``interval=1``, ``start=None``, ``save_best=None`` for this one evaluation (so no best-checkpoint file is
written or removed), ``runner.mode='val'``, ``_do_evaluate`` (every rank infers and collects; rank 0 runs
``dataset.evaluate``), then the metrics go through the logger hooks like any evaluation (logged as epoch 0
/ iteration 0: nothing trained yet). Eval-only then sets the runner's max epochs/iterations to the current
ones: no training iteration runs, no checkpoint is saved, ``after_run`` hooks still run.
The evaluation guards (``eval_guard``) and ``eval_samples`` subsetting apply in every mode.

Before a pre-training evaluation (and in every mode with ``preflight=True``) the distributed pitfalls are
checked on the job's own loaders (``preflight``); the evaluation uses the checkpoint's EMA weights the way
the evaluation after an epoch would (``ema``); without any checkpoint one line says that the initial
weights are evaluated.

With a checkpoint sweep (``sweep``: a :class:`~kradar_plugin.distributed.sweep.plan.SweepRequest`, eval-only
only) the one evaluation becomes one per checkpoint, in epoch order (``sweep``); ``after_run`` then ends
the process with a non-zero exit code unless every checkpoint succeeded.
"""
from mmcv.runner import HOOKS, EvalHook, Hook, LoggerHook

from .ema import checkpoint_ema_weights
from .eval_guard import check_collection, guard_eval_hook, uses_standard_collection
from kradar_plugin.distributed import run_context
from kradar_plugin.runner_options import check
from .subset import subset_eval_hook


@HOOKS.register_module()
class EvalOnlyHook(Hook):
    """Evaluate once before training; ``mode``: 'only' | 'first' | 'off'; ``eval_samples``: first N;
    ``preflight``: 'auto' (before a pre-training evaluation) | True | False; ``probe_model``: the preflight
    also runs one forward/backward to find parameters without gradient; ``sweep``: a checkpoint sweep's
    request (eval-only)."""

    def __init__(self, mode='only', eval_samples=None, guard=True, preflight='auto', probe_model=False,
                 sweep=None):
        self.mode = check('eval_mode', mode)
        self.sweep = sweep if sweep is not None and sweep.active else None
        if self.sweep is not None and self.mode != 'only':
            raise ValueError('a checkpoint sweep is eval-only: eval_mode={!r} cannot sweep'.format(self.mode))
        self.sweep_result = None
        self.sweep_started = False
        self.eval_samples = check('eval_samples', eval_samples)
        self.guard = guard
        self.preflight = check('preflight', preflight)
        self.probe_model = check('probe_model', probe_model)
        self.evaluated = 0
        self.preflight_results = None

    def wants_preflight(self):
        return self.mode != 'off' if self.preflight == 'auto' else bool(self.preflight)

    def eval_hooks(self, runner):
        return [h for h in runner.hooks if isinstance(h, EvalHook)]

    def before_run(self, runner):
        hooks = self.eval_hooks(runner)
        if not hooks and self.mode != 'off':
            raise RuntimeError(
                'eval_mode={!r} needs an evaluation hook, but the runner has none: run without '
                '--no-validate and with an `evaluation = dict(...)` and `data.val` in the config'.format(
                    self.mode))
        if self.eval_samples is not None:
            for hook in hooks:
                subset_eval_hook(hook, self.eval_samples, runner.logger)
        if self.wants_preflight():
            from .preflight import run_preflight
            self.preflight_results = run_preflight(runner, hooks, self.probe_model)
        for hook in hooks:
            if self.guard:
                if uses_standard_collection(hook):
                    check_collection(hook.dataloader)
                else:
                    runner.logger.info('%s has its own _do_evaluate: sampler order check skipped',
                                       type(hook).__name__)
                guard_eval_hook(hook)
        if self.mode == 'off':
            return
        if self.sweep is not None:
            from .sweep import run_sweep
            self.sweep_started = True
            self.sweep_result = run_sweep(self, runner, hooks, self.sweep)  # evaluate_now counts each
            self.stop_training(runner)
            return
        context = run_context.current()
        if context.checked_loading and context.checkpoint_report is None:
            runner.logger.info('kradar_plugin eval-%s: no checkpoint loaded (load_from/resume_from not set): '
                               'evaluating the initial weights of the model', self.mode)
        for hook in hooks:
            self.evaluate_now(runner, hook)
            if self.mode == 'first':
                hook.initial_flag = False  # its own start<=0 evaluation would repeat this one
        if self.mode == 'only':
            self.stop_training(runner)

    def after_run(self, runner):
        """A sweep with a failed checkpoint ends the process with a non-zero exit code (every rank)."""
        if self.sweep_result is not None:
            message = self.sweep_result.exit_message()
            if message:
                raise SystemExit(message if self.sweep_result.rank == 0 else 1)

    def evaluate_now(self, runner, hook):
        """One evaluation through the hook's own ``_do_evaluate``, logged by the logger hooks; returns the
        metrics it logged (rank 0; {} elsewhere)."""
        saved = (hook.interval, hook.start, hook.save_best, runner.mode,
                 getattr(runner, 'data_loader', None))
        hook.interval, hook.start, hook.save_best = 1, None, None
        runner.mode = 'val'
        runner.data_loader = hook.dataloader  # TextLoggerHook reads len(runner.data_loader)
        runner.logger.info('kradar_plugin eval-%s: evaluating %d validation samples before training',
                           self.mode, len(hook.dataloader.dataset))
        try:
            with checkpoint_ema_weights(runner):
                hook._do_evaluate(runner)
            metrics = dict((k, v) for k, v in runner.log_buffer.output.items()
                           if k != 'eval_iter_num') if runner.log_buffer.ready else {}
            self.log_metrics(runner)
        finally:
            (hook.interval, hook.start, hook.save_best, runner.mode, runner.data_loader) = saved
        self.evaluated += 1
        return metrics

    @staticmethod
    def log_metrics(runner):
        """Send the metrics in the log buffer (rank 0) through every logger hook, then clear it."""
        if runner.log_buffer.ready:
            for hook in runner.hooks:
                if isinstance(hook, LoggerHook):
                    hook.after_train_epoch(runner)
        runner.log_buffer.clear()

    @staticmethod
    def stop_training(runner):
        """Make the runner's loop condition false now: zero training iterations; after_run still runs."""
        if getattr(runner, '_max_epochs', None) is not None:
            runner._max_epochs = runner.epoch
        runner._max_iters = runner.iter
        runner.logger.info('kradar_plugin eval-only: done; stopping before the first training iteration '
                           '(no checkpoint written)')
