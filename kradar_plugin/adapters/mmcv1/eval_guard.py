"""Guards around an mmcv ``EvalHook``/``DistEvalHook``: exact collection, nothing lost, fail fast.

- before the first evaluation every rank shares its sampler indices and the job refuses a sampler whose
  collected order would not be exactly ``0 .. len(dataset) - 1`` (``kradar_plugin.distributed.collection``);
- after collection rank 0 checks that exactly ``len(dataset)`` predictions came back, pickles them under
  ``work_dir/eval_results/`` and only then calls ``dataset.evaluate``; if that raises, the message names
  the pickle and the ``kradar-eval`` command that re-runs the evaluation offline;
- any exception in inference, collection or evaluate on any rank of a multi-process job prints that
  rank's traceback tagged with its rank and ends the process at once (``failfast``), so its peers are not
  left in a collective: the launcher sees the failure and stops the job.
"""
from kradar_plugin.distributed import eval_support, run_context
from kradar_plugin.distributed.failfast import add_note
from kradar_plugin.distributed.collection import MMCV, check_result_count
from kradar_plugin.distributed.eval_support import fail_fast
from kradar_plugin.distributed.inference_session import excluded_note
from kradar_plugin.evaluation.command_line import write_excluded
from .inference import recorded_evaluation
from .subset import subset_by_indices


def uses_standard_collection(hook):
    """True when the hook evaluates through mmcv/mmdet's own ``_do_evaluate`` (zip-ordered collection).

    Projects with their own eval hook may pair a contiguous-chunk sampler with a collection that
    concatenates the parts (BEVFormer-style); the order check would be wrong for them, so it is skipped
    (the result-count check still applies)."""
    from mmcv.runner import DistEvalHook, EvalHook
    standard = {EvalHook._do_evaluate, DistEvalHook._do_evaluate}
    try:
        from mmdet.core.evaluation import eval_hooks
        standard |= {eval_hooks.EvalHook._do_evaluate, eval_hooks.DistEvalHook._do_evaluate}
    except Exception:  # mmdet absent or broken: only mmcv's hooks count as standard
        pass
    return type(hook)._do_evaluate in standard


def check_collection(loader):
    """Collective (every rank calls it): raise CollectionError if mmcv's collection would be inexact."""
    eval_support.check_collection(loader, MMCV)


def results_tag(runner, by_epoch):
    """``epoch_E``/``iter_I``: E epochs (I iterations) trained when the evaluation ran (0 = before)."""
    trained = 1 if runner.mode == 'train' else 0
    if by_epoch:
        return 'epoch_{}'.format(runner.epoch + trained)
    return 'iter_{}'.format(runner.iter + trained)


def save_results(results, runner, tag):
    """Pickle the collected predictions under ``work_dir/eval_results/results_<tag>.pkl``; returns the path."""
    return eval_support.save_results(results, runner.work_dir, tag)


def offline_command(dataset, results_path, eval_kwargs=None):
    """The ``kradar-eval`` command that re-runs this evaluation from the saved predictions.

    A dataset can supply its own with ``offline_eval_command(results_path, **eval_kwargs)``; otherwise
    the command is built from ``ann_file``, ``CLASSES``, the protocol (evaluation option or the dataset's
    ``eval_protocol``) and ``results_z_is_bottom``."""
    eval_kwargs = dict(eval_kwargs or {})
    own = getattr(dataset, 'offline_eval_command', None)
    if callable(own):
        try:
            return own(results_path, **eval_kwargs)
        except Exception:  # fall back to the generic command below
            pass
    from kradar_plugin.evaluation.command_line import shell_line
    parts = ['kradar-eval', '--infos', getattr(dataset, 'ann_file', None) or '<the validation info .pkl>',
             '--results', results_path]
    classes = getattr(dataset, 'CLASSES', None)
    if classes:
        parts += ['--classes'] + list(classes)
    protocol = eval_kwargs.get('protocol') or getattr(dataset, 'eval_protocol', None)
    if protocol:
        parts += ['--protocol', str(protocol)]
    if getattr(dataset, 'results_z_is_bottom', False):
        parts.append('--dt-z-is-bottom')
    return shell_line(parts)


def takes_excluded(dataset):
    """Whether ``dataset.evaluate`` accepts ``excluded_samples`` (the K-Radar evaluate does)."""
    import inspect
    try:
        return 'excluded_samples' in inspect.signature(dataset.evaluate).parameters
    except (TypeError, ValueError, AttributeError):
        return False


def guard_eval_hook(hook):
    """Wrap ``hook._do_evaluate`` and ``hook.evaluate`` (instance attributes; the class is untouched)."""
    if getattr(hook, '_kradar_guarded', False):
        return hook
    do_evaluate = hook._do_evaluate
    evaluate = hook.evaluate

    def tag_of(runner):
        return run_context.current().results_tag or results_tag(runner, hook.by_epoch)

    def guarded_evaluate(runner, results):
        loader = hook.dataloader
        dataset = full = loader.dataset
        check_result_count(len(results), len(dataset))
        context = run_context.current()
        session = context.session
        excluded = session.excluded if session is not None else []
        if excluded:   # skipped samples: left out on both sides, their ground truth too
            gone = set(f['index'] for f in excluded)
            keep = [i for i in range(len(results)) if i not in gone]
            results = [results[i] for i in keep]
            loader.dataset = dataset = subset_by_indices(dataset, keep)
            runner.logger.warning('kradar_plugin: %s', excluded_note(excluded))
        path = save_results(results, runner, tag_of(runner))
        runner.logger.info('%d predictions saved to %s before dataset.evaluate', len(results), path)
        if excluded:
            runner.logger.info('the samples left out are listed in %s', write_excluded(path, excluded))
        if session is not None:
            session.complete(path)
        context.saved_results = path  # a dataset that pickles its input first reuses this file
        kwargs = getattr(hook, 'eval_kwargs', None)
        if excluded and isinstance(kwargs, dict) and takes_excluded(dataset):
            hook.eval_kwargs = dict(kwargs, excluded_samples=excluded)   # its fingerprint line and metrics say so
        try:
            out = evaluate(runner, results)
            if excluded and not takes_excluded(dataset) and hasattr(runner, 'log_buffer'):
                runner.log_buffer.output['samples_excluded'] = len(excluded)   # beside the dataset's metrics
            if session is not None:
                session.finished()
            return out
        except Exception as exc:
            add_note(exc, 'dataset.evaluate failed; the {} collected predictions are saved in\n  {}\n'
                          'Re-run the evaluation offline with:\n  {}'.format(
                              len(results), path,
                              offline_command(dataset, path, getattr(hook, 'eval_kwargs', None))))
            raise
        finally:
            context.saved_results = None
            if excluded:
                loader.dataset = full
                hook.eval_kwargs = kwargs

    hook.evaluate = guarded_evaluate
    hook._do_evaluate = fail_fast(recorded_evaluation(hook, do_evaluate, tag_of),
                                  'evaluation (inference, result collection or dataset.evaluate)')
    hook._kradar_guarded = True
    return hook
