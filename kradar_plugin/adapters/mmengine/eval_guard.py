"""Guards around mmengine's validation loop: exact collection, nothing lost, fail fast.

- before the first evaluation every rank shares its sampler indices and the job refuses a sampler whose
  collected order would not be exactly ``0 .. len(dataset) - 1`` (``kradar_plugin.distributed.collection``);
- on rank 0, before each metric's ``compute_metrics`` runs, the collected results are checked (exactly
  ``len(dataset)`` of them, no ``sample_idx`` twice) and pickled under ``work_dir/eval_results/``; if the
  metric raises, the message names the pickle (and, for ``KRadarMetric``, the ``kradar-eval`` command that
  re-runs the evaluation offline);
- any exception in inference, collection or the metric on any rank of a multi-process job prints that
  rank's traceback tagged with its rank and ends the process at once (``failfast``), so its peers are not
  left waiting in a collective until the distributed timeout: the launcher sees the failure and stops the
  job. One-process runs raise as usual.
"""
from kradar_plugin.distributed import eval_support, run_context
from kradar_plugin.distributed.failfast import add_note
from kradar_plugin.distributed.collection import MMENGINE, check_results
from kradar_plugin.distributed.eval_support import fail_fast
from kradar_plugin.distributed.inference_session import excluded_note
from kradar_plugin.evaluation.command_line import write_excluded
from .inference import guard_inference


def check_collection(loader):
    """Collective (every rank calls it): raise CollectionError if mmengine's collection would be inexact."""
    eval_support.check_collection(loader, MMENGINE)


def results_tag(runner):
    """``epoch_E`` / ``iter_I``: the epochs (iterations) trained when the evaluation ran (0 = before)."""
    from mmengine.runner import IterBasedTrainLoop
    loop = getattr(runner, '_train_loop', None)
    if isinstance(loop, IterBasedTrainLoop):
        return 'iter_{}'.format(runner.iter)
    return 'epoch_{}'.format(runner.epoch if loop is not None and not isinstance(loop, dict) else 0)


save_results = eval_support.save_results


def offline_note(metric, path, count):
    """What to tell the user when ``metric.compute_metrics`` failed: where the collected results are, and
    the offline command when the metric saved its own files first (``KRadarMetric``)."""
    note = '{}.compute_metrics failed; the {} collected results are saved in\n  {}'.format(
        type(metric).__name__, count, path)
    own = getattr(metric, 'last_results_file', None)
    command = getattr(metric, 'offline_eval_command', None)
    if own and callable(command):
        try:
            note += '\nRe-run the evaluation offline with:\n  {}'.format(command(own))
        except Exception:  # the note must never hide the original error
            pass
    return note


def guard_metrics(runner, loop):
    """Wrap ``compute_metrics`` of every metric of ``loop.evaluator`` (instance attributes; classes untouched)."""
    metrics = list(getattr(loop.evaluator, 'metrics', []))
    for number, metric in enumerate(metrics):
        if getattr(metric, '_kradar_guarded', False):
            continue
        suffix = '' if len(metrics) == 1 else '_{}{}'.format(type(metric).__name__, number)
        metric.compute_metrics = _guarded_compute(runner, loop, metric, metric.compute_metrics, suffix)
        metric._kradar_guarded = True


def _guarded_compute(runner, loop, metric, compute, suffix):
    def compute_metrics(results):
        context = run_context.current()
        session = context.session
        excluded = session.excluded if session is not None else []
        size = len(loop.dataloader.dataset)
        if excluded:   # skipped samples: left out with their ground truth (the metric matches by sample_idx)
            results = [r for r in results if r is not None]
            size -= len(excluded)
            runner.logger.warning('kradar_plugin: %s', excluded_note(excluded))
        check_results(results, size, type(metric).__name__)
        path = save_results(results, runner.work_dir, (context.results_tag or results_tag(runner)) + suffix)
        if excluded:
            runner.logger.info('kradar_plugin: the samples left out are listed in %s', write_excluded(path, excluded))
        if session is not None:
            session.complete(path)
        context.saved_results = path  # a metric that pickles its input first reuses this file
        if hasattr(metric, 'last_results_file'):
            metric.last_results_file = None  # set again by a metric that saves its own files
        runner.logger.info('%d collected results saved to %s before %s.compute_metrics', len(results), path,
                           type(metric).__name__)
        if excluded and hasattr(metric, 'excluded_samples'):
            metric.excluded_samples = excluded   # KRadarMetric: its fingerprint line and metrics say so
        try:
            out = compute(results)
            if session is not None:
                session.finished()
            return out
        except Exception as exc:
            add_note(exc, offline_note(metric, path, len(results)))
            raise
        finally:
            context.saved_results = None
            if excluded and hasattr(metric, 'excluded_samples'):
                metric.excluded_samples = None
    return compute_metrics


def guard_loop(loop, runner=None):
    """Make ``loop.run`` fail fast in multi-process jobs, its inference named, recorded and resumable
    (``inference``; with ``runner``) (instance attribute)."""
    if getattr(loop, '_kradar_guarded', False):
        return loop
    if runner is not None:
        guard_inference(runner, loop, lambda r: run_context.current().results_tag or results_tag(r))
    loop.run = fail_fast(loop.run, 'evaluation (inference, result collection or compute_metrics)')
    loop._kradar_guarded = True
    return loop
