"""The mmengine side of the checkpoint sweep: ``EvalOnlyHook.before_train`` calls :func:`run_sweep` after the
runner, model, DDP wrapper and loaders are built (once), and the framework-free
``kradar_plugin.distributed.sweep.loop.CheckpointSweep`` takes each checkpoint through:

- loading: ``runner.load_checkpoint`` (mmengine's own loading), then the checkpoint report of
  ``kradar_plugin.distributed.checkpoint_report`` on what the checkpoint holds for the model (logged on rank 0)
  and its refusal: less than ``min_loaded`` of the parameter elements loaded raises on every rank;
- evaluating: ``runner.val_loop.run()`` (inference and collection on every rank, the metrics on rank 0 and
  broadcast), the collected results saved as ``eval_results/results_<checkpoint stem>.pkl`` first, logged as
  ``Epoch(val) [<checkpoint epoch>]``. mmengine broadcasts the metrics after ``compute_metrics``, so in a
  multi-process job a failing metric ends the job (fail-fast); a one-process failure is recorded.
"""
from kradar_plugin.distributed import checkpoint_report as cr
from kradar_plugin.distributed import run_context
from kradar_plugin.distributed.failfast import rank_tag
from kradar_plugin.distributed.inference_record import evaluation_key
from kradar_plugin.distributed.sweep.loop import CheckpointSweep


def _loader(runner, min_loaded):
    def load(path):
        checkpoint = runner.load_checkpoint(path, map_location='cpu')
        entries = cr.model_entries(runner.model)
        state_dict, repairs = cr.prepare_state_dict(checkpoint, entries.keys(), path)
        shapes = dict((k, tuple(v.shape)) for k, v in state_dict.items() if cr._is_tensor_like(v))
        report = cr.build_report(entries, shapes, path, repairs, min_loaded)
        if rank_tag().startswith('[rank 0/'):
            runner.logger.info('kradar_plugin checkpoint: ' + cr.summary_line(report))
        cr.check_min_loaded(report, min_loaded, rank_tag())
        meta = checkpoint.get('meta') if isinstance(checkpoint, dict) else None
        epoch = meta.get('epoch') if isinstance(meta, dict) and isinstance(meta.get('epoch'), int) else None
        return dict(epoch=epoch, loaded_fraction=report.get('loaded_fraction'))
    return load


def _evaluator(hook, runner, loop, context):
    def evaluate(path, epoch, tag):
        train_loop = runner.train_loop
        saved = getattr(train_loop, '_epoch', None)
        if epoch is not None and saved is not None:  # the log shows the checkpoint's epoch: Epoch(val) [E]
            train_loop._epoch = epoch
        context.results_tag = tag
        try:
            metrics = hook.evaluate_now(runner, loop) or {}
        finally:
            context.results_tag = None
            if saved is not None:
                train_loop._epoch = saved
        return dict(metrics), None
    return evaluate


def run_sweep(hook, runner, loop, request, min_loaded=cr.DEFAULT_MIN_LOADED):
    """The whole sweep on this rank; returns the ``CheckpointSweep`` (its ``exit_message()``)."""
    context = run_context.current()
    sweep = CheckpointSweep(request, runner.work_dir, runner.logger, resume=context.inference[0],
                            evaluation=evaluation_key([loop.dataloader.dataset]))
    sweep.run(_loader(runner, min_loaded), _evaluator(hook, runner, loop, context))
    return sweep
