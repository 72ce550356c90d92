"""EMA weights in the pre-training evaluation, exactly as the evaluation after an epoch sees them.

mmcv's ``EMAHook`` and mmdet's ``ExpMomentumEMAHook``/``LinearMomentumEMAHook`` (``BaseEMAHook``) keep the
averages in ``ema_<name>`` buffers registered in their ``before_run`` and swap them with the parameters in
``after_train_epoch``, so the ``EvalHook`` (priority LOW) scores the averaged weights. Which of the two a
checkpoint stores as *parameters* depends on the hook's place relative to ``CheckpointHook`` (NORMAL) in
``after_train_epoch``:

- EMA hook before CheckpointHook (mmdet configs use ``priority=49``): the swap happened before saving, so
  the checkpoint's parameters ARE the averages (and its ``ema_*`` entries the raw weights). The evaluation
  after that epoch scored the parameters: the pre-training evaluation scores them as loaded.
- EMA hook after CheckpointHook (e.g. mmcv's ``EMAHook`` at the default NORMAL priority, registered after
  the CheckpointHook): the checkpoint's parameters are the raw weights and its ``ema_*`` entries the
  averages that the evaluation scored: for the pre-training evaluation they are copied into the parameters
  and the raw ones put back afterwards (the EMA buffers themselves are left alone).

Without an EMA hook in the config the loaded parameters are evaluated (with a line saying the checkpoint
also holds averages); with a hook but no ``ema_*`` entries in the checkpoint, too. Under an
``IterBasedRunner`` the hooks never swap (``after_train_epoch`` is not called) and every evaluation scores
the raw weights: so does the pre-training one.
"""
import contextlib

from kradar_plugin.distributed import run_context

EMA_HOOK_NAMES = ('EMAHook', 'BaseEMAHook', 'ExpMomentumEMAHook', 'LinearMomentumEMAHook')


def _ema_hook_classes():
    classes = []
    try:
        from mmcv.runner.hooks import EMAHook
        classes.append(EMAHook)
    except ImportError:
        pass
    try:
        from mmdet.core.hook.ema import BaseEMAHook
        classes.append(BaseEMAHook)
    except Exception:  # mmdet absent or broken: mmcv's hook only
        pass
    return tuple(classes)


def ema_hooks(runner):
    """The runner's EMA hooks (mmcv EMAHook, mmdet BaseEMAHook subclasses)."""
    classes = _ema_hook_classes()
    return [h for h in runner.hooks if (classes and isinstance(h, classes)) or
            (type(h).__name__ in EMA_HOOK_NAMES and hasattr(h, 'param_ema_buffer'))]


def saved_after_swap(runner, hook):
    """True when the hook's ``after_train_epoch`` swap runs before CheckpointHook saves: the checkpoint's
    parameters are then the averaged weights."""
    from mmcv.runner import CheckpointHook
    hooks = list(runner.hooks)
    savers = [i for i, h in enumerate(hooks) if isinstance(h, CheckpointHook)]
    if not savers or hook not in hooks:
        return False
    return hooks.index(hook) < savers[0]


@contextlib.contextmanager
def checkpoint_ema_weights(runner, logger=None, context=None):
    """Within the block the model holds the weights that the evaluation after an epoch would score
    (``context``: the run's :class:`RunContext`, default the current one, holds the loaded checkpoint)."""
    logger = logger or runner.logger
    context = context or run_context.current()
    report = context.checkpoint_report
    saved_ema = context.checkpoint_ema or {}
    hooks = ema_hooks(runner)
    if report is None:  # no checkpoint loaded: the EMA buffers were just cloned from the weights
        yield None
        return
    if not hooks:
        if saved_ema:
            _set(runner, report, 'raw (no EMA hook in the config)')
            logger.info('kradar_plugin checkpoint: it holds %d EMA entries but the config has no EMA hook: '
                        'evaluating its parameters as loaded', len(saved_ema))
        yield None
        return
    from mmcv.runner import IterBasedRunner
    if isinstance(runner, IterBasedRunner):  # after_train_epoch never runs: no swap, raw weights evaluated
        _set(runner, report, 'raw (IterBasedRunner: the EMA hooks swap only after epochs)')
        logger.info('kradar_plugin checkpoint: IterBasedRunner never calls after_train_epoch, so %s never swaps '
                    'the averages in and its evaluations score the raw weights: so does this one',
                    '/'.join(type(h).__name__ for h in hooks))
        yield hooks
        return
    restore = []
    try:
        for hook in hooks:
            name = type(hook).__name__
            if saved_after_swap(runner, hook):
                _set(runner, report, 'ema (the parameters: saved after the swap)')
                logger.info('kradar_plugin checkpoint: %s swaps the averages in before CheckpointHook saves: '
                            'the loaded parameters are the EMA weights, evaluated as loaded', name)
                continue
            mapping = getattr(hook, 'param_ema_buffer', None) or {}
            params = getattr(hook, 'model_parameters', None) or {}
            pairs = [(params[n], saved_ema.get(b)) for n, b in mapping.items() if n in params]
            missing = [b for _, b in mapping.items() if b not in saved_ema]
            if not mapping or missing:
                _set(runner, report, 'raw (no EMA entries in the checkpoint)')
                logger.info('kradar_plugin checkpoint: %s is configured but the checkpoint holds %s: evaluating '
                            'its parameters as loaded', name,
                            'no EMA entries' if len(missing) == len(mapping) else
                            'only {} of {} EMA entries'.format(len(mapping) - len(missing), len(mapping)))
                continue
            bad = [b for (value, ema), b in zip(pairs, mapping.values()) if tuple(value.shape) != tuple(ema.shape)]
            if bad:
                raise ValueError('checkpoint EMA entry {} has another shape than the parameter it '
                                 'averages'.format(bad[0]))
            for value, ema in pairs:
                restore.append((value, value.data.clone()))
                value.data.copy_(ema.to(device=value.device, dtype=value.dtype))
            _set(runner, report, 'ema (the checkpoint\'s ema_* entries)')
            logger.info('kradar_plugin checkpoint: evaluating the checkpoint\'s EMA weights (%s: %d tensors), '
                        'as the evaluation after each epoch does', name, len(pairs))
        yield hooks
    finally:
        for value, raw in reversed(restore):
            value.data.copy_(raw)


def _set(runner, report, what):
    report['ema']['evaluated'] = what
    from .checkpoint_loading import write_report
    write_report(report, runner.work_dir)
