"""The mmcv 1.x side of the checkpoint sweep: ``EvalOnlyHook`` calls :func:`run_sweep` in ``before_run``
(after the runner, model, DDP wrapper, loaders and hooks are built, once) and the framework-free
``kradar_plugin.distributed.sweep.loop.CheckpointSweep`` takes each checkpoint through:

- loading: ``runner.load_checkpoint`` -- the checked loading of ``checkpoint_loading`` (report on rank 0,
  ``min_loaded`` refusal on every rank, EMA entries kept for the evaluation);
- evaluating: each ``EvalHook``/``DistEvalHook`` through the hook's own ``_do_evaluate`` (inference and
  result collection on every rank, ``dataset.evaluate`` on rank 0), with the predictions saved as
  ``eval_results/results_<checkpoint stem>.pkl`` first and the metrics logged by the logger hooks as
  ``Epoch(val) [<checkpoint epoch>]``. A ``dataset.evaluate`` that raises is recorded (rank 0 alone runs it,
  so the ranks stay in step) instead of ending the job.
"""
from kradar_plugin.distributed import run_context
from kradar_plugin.distributed.inference_record import evaluation_key
from kradar_plugin.distributed.sweep.loop import CheckpointSweep, error_text


def _loader(runner, context):
    def load(path):
        context.checkpoint_report = None
        context.checkpoint_meta = None
        runner.load_checkpoint(path, map_location='cpu')
        meta = context.checkpoint_meta or {}
        report = context.checkpoint_report or {}
        epoch = meta.get('epoch') if isinstance(meta.get('epoch'), int) else None
        return dict(epoch=epoch, loaded_fraction=report.get('loaded_fraction'))
    return load


def _evaluator(hook, runner, eval_hooks, context):
    def evaluate(path, epoch, tag):
        metrics, errors = {}, []
        saved = (runner._epoch, runner._iter)
        if epoch is not None:  # the log shows the checkpoint's epoch: Epoch(val) [E]
            runner._epoch = epoch
        context.results_tag = tag
        try:
            for eval_hook in eval_hooks:
                guarded = eval_hook.evaluate

                def recording_evaluate(runner_, results, _guarded=guarded):
                    try:
                        return _guarded(runner_, results)
                    except Exception as exc:  # rank 0 only: the other ranks are not waiting on it
                        errors.append(error_text(exc))
                        runner.logger.error('kradar_plugin sweep: dataset.evaluate of %s failed: %s', tag,
                                            errors[-1])
                        return None

                eval_hook.evaluate = recording_evaluate
                try:
                    metrics.update(hook.evaluate_now(runner, eval_hook))
                finally:
                    eval_hook.evaluate = guarded
        finally:
            runner._epoch, runner._iter = saved
            context.results_tag = None
        return metrics, ('\n'.join(errors) if errors else None)
    return evaluate


def run_sweep(hook, runner, eval_hooks, request):
    """The whole sweep on this rank; returns the ``CheckpointSweep`` (its ``exit_message()``)."""
    context = run_context.current()
    sweep = CheckpointSweep(request, runner.work_dir, runner.logger, resume=context.inference[0],
                            evaluation=evaluation_key([h.dataloader.dataset for h in eval_hooks]))
    sweep.run(_loader(runner, context), _evaluator(hook, runner, eval_hooks, context))
    return sweep
