"""What the mmcv 1.x ``EvalHook`` guard and the mmengine validation-loop guard both do around an
evaluation: know the process group, check every rank's sampler indices before the first evaluation, save
the collected results before the metric runs, and end a failing multi-process evaluation at once.
torch is imported only inside the functions that need a process group.
"""
import os.path as osp
import sys

from .collection import check_rank_indices
from .failfast import notes_text, process_group, report_and_exit, traceback_shows_notes

RESULTS_DIR = 'eval_results'


def dist_info():
    """(rank, world size); (0, 1) without an initialised process group."""
    return process_group() or (0, 1)


def broadcast(obj):
    """rank 0's ``obj`` on every rank (one process: ``obj``)."""
    if dist_info()[1] == 1:
        return obj
    import torch.distributed as dist
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather(obj):
    """Every rank's ``obj``, in rank order (one process: ``[obj]``)."""
    world = dist_info()[1]
    if world == 1:
        return [obj]
    import torch.distributed as dist
    out = [None] * world
    dist.all_gather_object(out, obj)
    return out


def loader_indices(loader):
    """The dataset indices this rank's loader will visit, in order."""
    sampler = getattr(loader, 'sampler', None)
    if sampler is None:
        return list(range(len(loader.dataset)))
    return [int(i) for i in iter(sampler)]


def check_collection(loader, collector):
    """Collective (every rank calls it): raise CollectionError if ``collector``'s collection ('mmcv' or
    'mmengine') of this loader's predictions would not be exactly the dataset in order."""
    check_rank_indices(gather(loader_indices(loader)), len(loader.dataset), collector)


def save_results(results, work_dir, tag):
    """Pickle the collected results under ``work_dir/eval_results/results_<tag>.pkl`` (atomically, as plain
    numpy: tensors and box objects converted, so ``kradar-eval`` loads them without torch or mmdet3d)."""
    from kradar_plugin.evaluation.inputs.result_io import write_results_pickle
    path = osp.abspath(osp.join(work_dir or '.', RESULTS_DIR, 'results_{}.pkl'.format(tag)))
    return write_results_pickle(results, path)


def fail_fast(function, stage):
    """``function`` wrapped so that an exception in a multi-process job prints this rank's traceback with
    the notes the guards attached to the exception (``failfast.add_note``: what to do with the saved
    results) and ends the process at once, leaving no peer waiting in a collective; a one-process run
    raises as usual, its notes printed once (by the traceback itself where it shows notes)."""

    def guarded(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as exc:
            if dist_info()[1] > 1:
                report_and_exit(exc, stage)
            note = notes_text(exc)
            if note and not traceback_shows_notes(exc):   # else the traceback that follows prints it
                sys.stderr.write(note + '\n')
                sys.stderr.flush()
            raise
    return guarded
