"""Guards around an mmcv ``EvalHook``/``DistEvalHook``: exact collection, nothing lost, fail fast.

- before the first evaluation every rank shares its sampler indices and the job refuses a sampler whose
  collected order would not be exactly ``0 .. len(dataset) - 1`` (see ``collection_check``);
- after collection rank 0 checks that exactly ``len(dataset)`` predictions came back, pickles them under
  ``work_dir/eval_results/`` and only then calls ``dataset.evaluate``; if that raises, the message names
  the pickle and the ``kradar-eval`` command that re-runs the evaluation offline;
- any exception in inference, collection or evaluate on any rank of a multi-process job prints that
  rank's traceback tagged with its rank and ends the process at once (``failfast``), so its peers are not
  left in a collective: the launcher sees the failure and stops the job.
"""
import os
import os.path as osp
import sys

from .collection_check import check_rank_indices, check_result_count
from .failfast import report_and_exit

RESULTS_DIR = 'eval_results'


def _dist_info():
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    return 0, 1


def loader_indices(loader):
    """The dataset indices this rank's validation loader will visit, in order."""
    sampler = getattr(loader, 'sampler', None)
    if sampler is None:
        return list(range(len(loader.dataset)))
    return [int(i) for i in iter(sampler)]


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
    """Collective (every rank calls it): raise CollectionError if collection would be inexact."""
    rank, world = _dist_info()
    indices = loader_indices(loader)
    if world > 1:
        import torch.distributed as dist
        gathered = [None] * world
        dist.all_gather_object(gathered, indices)
    else:
        gathered = [indices]
    check_rank_indices(gathered, len(loader.dataset))


def results_tag(runner, by_epoch):
    """``epoch_E``/``iter_I``: E epochs (I iterations) trained when the evaluation ran (0 = before)."""
    trained = 1 if runner.mode == 'train' else 0
    if by_epoch:
        return 'epoch_{}'.format(runner.epoch + trained)
    return 'iter_{}'.format(runner.iter + trained)


def save_results(results, runner, tag):
    """Pickle the collected predictions under ``work_dir/eval_results/results_<tag>.pkl`` (atomically, as plain
    numpy: tensors and box objects converted, so ``kradar-eval`` loads them without torch or mmdet3d)."""
    from kradar_plugin.datasets.result_io import write_results_pickle
    out_dir = osp.join(runner.work_dir or '.', RESULTS_DIR)
    path = osp.abspath(osp.join(out_dir, 'results_{}.pkl'.format(tag)))
    return write_results_pickle(results, path)


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
    parts = ['kradar-eval', '--infos', getattr(dataset, 'ann_file', None) or '<the validation info .pkl>',
             '--results', results_path]
    classes = getattr(dataset, 'CLASSES', None)
    if classes:
        parts += ['--classes'] + [_quote(c) for c in classes]
    protocol = eval_kwargs.get('protocol') or getattr(dataset, 'eval_protocol', None)
    if protocol:
        parts += ['--protocol', str(protocol)]
    if getattr(dataset, 'results_z_is_bottom', False):
        parts.append('--dt-z-is-bottom')
    return ' '.join(str(p) for p in parts)


def _quote(text):
    text = str(text)
    return text if text.replace('_', '').replace('-', '').isalnum() else "'{}'".format(text)


def guard_eval_hook(hook):
    """Wrap ``hook._do_evaluate`` and ``hook.evaluate`` (instance attributes; the class is untouched)."""
    if getattr(hook, '_kradar_guarded', False):
        return hook
    do_evaluate = hook._do_evaluate
    evaluate = hook.evaluate
    hook._kradar_note = None
    hook.last_results_file = None

    def guarded_evaluate(runner, results):
        dataset = hook.dataloader.dataset
        check_result_count(len(results), len(dataset))
        path = save_results(results, runner, results_tag(runner, hook.by_epoch))
        hook.last_results_file = path
        runner.logger.info('%d predictions saved to %s before dataset.evaluate', len(results), path)
        dataset.kradar_saved_results = path  # a dataset that pickles its input first can reuse this file
        meta = getattr(runner, 'kradar_checkpoint_meta', None)
        if meta is not None:  # the loaded checkpoint's meta: its mmdet3d version tells the box convention
            dataset.kradar_checkpoint_meta = meta
        try:
            return evaluate(runner, results)
        except Exception:
            hook._kradar_note = (
                'dataset.evaluate failed; the {} collected predictions are saved in\n  {}\n'
                'Re-run the evaluation offline with:\n  {}'.format(
                    len(results), path,
                    offline_command(dataset, path, getattr(hook, 'eval_kwargs', None))))
            raise

    def guarded_do_evaluate(runner):
        hook._kradar_note = None
        try:
            return do_evaluate(runner)
        except Exception as exc:
            _, world = _dist_info()
            if world > 1:
                report_and_exit(exc, 'evaluation (inference, result collection or dataset.evaluate)',
                                extra=hook._kradar_note)
            if hook._kradar_note:
                sys.stderr.write(hook._kradar_note + '\n')
                sys.stderr.flush()
            raise

    hook.evaluate = guarded_evaluate
    hook._do_evaluate = guarded_do_evaluate
    hook._kradar_guarded = True
    return hook
