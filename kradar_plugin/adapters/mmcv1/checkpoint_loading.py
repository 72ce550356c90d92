"""The runner side of the checkpoint report: load ``load_from``/``resume_from`` through
``checkpoint_report`` and refuse too-little-loaded checkpoints on every rank.

``install_checked_loading(runner, context, min_loaded)`` replaces ``runner.load_checkpoint`` (what mmdet/mmdet3d's
``train_detector`` call for ``load_from``, and ``runner.resume`` for ``resume_from``) on that runner
instance. For each checkpoint it:

1. reads the file (a truncated or corrupted file: ``CheckpointReadError`` naming it);
2. finds the weights and repairs the key layout (nested ``state_dict``/``model`` entries, ``module.`` at
   any depth), with ONE warning listing the repairs (rank 0);
3. loads them with mmcv's own ``load_state_dict`` (same ``strict`` semantics and messages);
4. logs the report on rank 0 (``loaded 100.0% of N parameters ...`` and a line per incomplete top-level
   module) and writes it to ``work_dir/kradar_checkpoint_report.json``;
5. raises ``CheckpointLoadError`` on EVERY rank (each rank loaded the same file and computed the same
   report) when less than ``min_loaded`` of the parameter elements were loaded.

The report is kept as the run context's ``checkpoint_report`` and the checkpoint's EMA entries (``ema_*``
buffers of mmcv's ``EMAHook`` / mmdet's EMA hooks) as its ``checkpoint_ema`` for the
pre-training evaluation (see ``ema``).

Every read goes through ``kradar_plugin.loading.load_checkpoint`` (no code in the file runs), once:
``install_framework_loading`` (at import of the adapter) makes it mmcv's ``CheckpointLoader`` scheme for local
files, so mmcv's own ``load_checkpoint`` -- any runner's ``load_checkpoint``/``resume`` (mmdet's and
EchoFusion's ``train.py`` without our constructor too), ``init_cfg`` pretrained weights -- reads through it.
"""
import json
import os
import os.path as osp
import warnings

from kradar_plugin.distributed import checkpoint_report as cr


class CheckpointRepairWarning(UserWarning):
    """The checkpoint's key layout was repaired before loading (issued once per checkpoint)."""


def _rank():
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except ImportError:
        pass
    return 0


def _rank_tag():
    from kradar_plugin.distributed.failfast import rank_tag
    return rank_tag()


def write_report(report, work_dir):
    """Write the report to ``work_dir/kradar_checkpoint_report.json`` (rank 0 only); returns the path."""
    if _rank() != 0 or not work_dir:
        return None
    os.makedirs(work_dir, exist_ok=True)
    path = osp.join(work_dir, cr.REPORT_FILE)
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(report, f, indent=2)
        f.write('\n')
    os.replace(tmp, path)
    return path


def log_report(report, logger, path=None):
    """The report on rank 0: the summary line, a line per incomplete module, repairs, where it was saved."""
    if _rank() != 0:
        return
    lines = ['kradar_plugin checkpoint: ' + cr.summary_line(report)] + cr.module_lines(report)
    if report.get('cause') and report['loaded_fraction'] < 1.0:
        lines.append('  likely cause: ' + report['cause'])
    if path:
        lines.append('  report: ' + path)
    _info(logger, '\n'.join(lines))


def _info(logger, text):
    if logger is not None:
        logger.info(text)
    else:
        print(text)


def warn_repairs(filename, repairs, logger):
    """ONE warning for all the repairs made to one checkpoint (rank 0)."""
    if not repairs or _rank() != 0:
        return
    text = 'kradar_plugin: repaired the key layout of checkpoint {} before loading: {}'.format(
        filename, '; '.join(repairs))
    if logger is not None:
        logger.warning(text)
    else:
        warnings.warn(text, CheckpointRepairWarning, stacklevel=3)


def report_for(model, checkpoint, filename, revise_keys=None, min_loaded=cr.DEFAULT_MIN_LOADED):
    """(state_dict ready to load, report) for ``checkpoint`` (already read) and ``model``."""
    entries = cr.model_entries(model)
    state_dict, repairs = cr.prepare_state_dict(checkpoint, entries.keys(), filename, revise_keys)
    shapes = dict((k, tuple(v.shape)) for k, v in state_dict.items() if cr._is_tensor_like(v))
    report = cr.build_report(entries, shapes, _display_name(filename), repairs, min_loaded)
    return state_dict, report


def _display_name(filename):
    text = str(filename)
    return osp.abspath(text) if osp.exists(osp.expanduser(text)) else text


def load_checked(model, filename, map_location='cpu', strict=False, logger=None, revise_keys=None,
                 min_loaded=cr.DEFAULT_MIN_LOADED, work_dir=None):
    """mmcv's ``load_checkpoint`` with the report: returns (checkpoint, report, loaded state_dict).

    Raises CheckpointReadError for an unreadable file and CheckpointLoadError (after logging and writing the
    report) when less than ``min_loaded`` of the parameter elements were loaded (0 or None: no check)."""
    checkpoint = cr.read_checkpoint(filename, map_location, logger, _rank_tag())
    state_dict, report = report_for(model, checkpoint, filename, revise_keys, min_loaded)
    warn_repairs(_display_name(filename), report['repairs'], logger)
    path = write_report(report, work_dir)
    log_report(report, logger, path)
    from mmcv.runner.checkpoint import load_state_dict
    load_state_dict(model, state_dict, strict, logger)
    cr.check_min_loaded(report, min_loaded, _rank_tag())
    return checkpoint, report, state_dict


def _uses_mmcv_loading(runner):
    from mmcv.runner import BaseRunner
    return getattr(type(runner), 'load_checkpoint', None) is BaseRunner.load_checkpoint


def install_checked_loading(runner, context, min_loaded=cr.DEFAULT_MIN_LOADED, skip=None):
    """Replace ``runner.load_checkpoint`` on this instance -- the one wrapper of the mmcv 1.x adapter (see the
    module docstring): the checked loading, whose report is recorded in ``context`` (a
    :class:`~kradar_plugin.distributed.run_context.RunContext`), the checkpoint's ``meta`` kept as
    ``context.checkpoint_meta`` (the evaluation compares the mmdet3d version it records with the box convention
    in use; ``load_from`` and ``resume_from`` both come here), and ``skip(filename)``: True for a load to leave
    out (a checkpoint sweep replaces the config's ``load_from``; ``skip`` logs why), which then returns {}."""
    context.checked_loading = True
    context.min_loaded = min_loaded
    original = runner.load_checkpoint

    if _uses_mmcv_loading(runner):
        def checked(filename, map_location='cpu', strict=False, revise_keys=((r'^module.', ''),)):
            checkpoint, report, state_dict = load_checked(
                runner.model, filename, map_location, strict, runner.logger, list(revise_keys), min_loaded,
                runner.work_dir)
            _keep(context, report, state_dict)
            return checkpoint
    else:  # a runner with its own loading: keep it, report what its checkpoint holds for the model
        def checked(filename, *args, **kwargs):
            checkpoint = original(filename, *args, **kwargs)
            if isinstance(checkpoint, dict):
                state_dict, report = report_for(runner.model, checkpoint, filename, None, min_loaded)
                path = write_report(report, runner.work_dir)
                log_report(report, runner.logger, path)
                _keep(context, report, state_dict)
                cr.check_min_loaded(report, min_loaded, _rank_tag())
            return checkpoint

    def load_checkpoint(filename, *args, **kwargs):
        if skip is not None and skip(filename):
            return {}
        checkpoint = checked(filename, *args, **kwargs)
        if isinstance(checkpoint, dict) and isinstance(checkpoint.get('meta'), dict):
            context.checkpoint_meta = checkpoint['meta']
        return checkpoint

    runner.load_checkpoint = load_checkpoint
    return runner


def load_from_local(filename, map_location):
    """mmcv's local-file scheme, read by the plugin's loader (the name keeps mmcv's log line: 'load checkpoint
    from local path: ...')."""
    return cr.read_checkpoint(filename, map_location, rank_tag=_rank_tag())


def install_framework_loading():
    """Make :func:`load_from_local` mmcv's ``CheckpointLoader`` scheme for local paths (``''``)."""
    from mmcv.runner.checkpoint import CheckpointLoader
    try:
        CheckpointLoader.register_scheme(prefixes='', loader=load_from_local, force=True)
    except TypeError:               # an mmcv before register_scheme's force: the table itself
        CheckpointLoader._schemes[''] = load_from_local


def _keep(context, report, state_dict):
    context.checkpoint_report = report
    context.checkpoint_ema = dict((k, v) for k, v in state_dict.items() if cr.EMA_KEY.match(k))
