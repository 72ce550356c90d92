"""The fixed K-Radar ``evaluate()`` for any mmdet/mmdet3d 1.x dataset class with EchoFusion's info pickles:
the mmcv 1.x counterpart of ``adapters/mmengine/kradar_metric.py``, both thin layers over ``KRadarEvaluator``.

Two ways to give an existing project's dataset (e.g. EchoFusion's ``KRadarDataset``) this ``evaluate``
without editing that project:

1. Mixin, in your own code::

       from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import KRadarEvalMixin

       @DATASETS.register_module(force=True)
       class KRadarDataset(KRadarEvalMixin, EchoFusionKRadarDataset):
           pass

2. Registry patch, no new code: replace the registered class by a subclass with the mixin::

       from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import patch_dataset_evaluate
       patch_dataset_evaluate('KRadarDataset')   # after the project registered it

   or from a config, listing the patch module after the project in ``custom_imports`` (it patches the names
   in ``KRADAR_PATCH_DATASETS``, default ``KRadarDataset``)::

       custom_imports = dict(imports=['projects.mmdet3d_plugin', 'kradar_plugin',
                                      'kradar_plugin.adapters.mmcv1.patch_echofusion'],
                             allow_failed_imports=False)

What the mixin needs from the dataset: ``data_infos`` (EchoFusion info dicts; GT is read from it at every
call, so slicing it to the first N frames keeps GT and results consistent), ``CLASSES``, and optionally
``pcd_limit_range`` (default EchoFusion's), ``azi_limit_range`` in degrees or EchoFusion's
``max_azimtuth_rad`` (default +-50 deg), ``eval_protocol`` (default 'legacy'), ``results_z_is_bottom``
(default False: box z is the centre, as EchoFusion's models output it), ``results_dir`` and ``ann_file``.
"""
import inspect
import logging
import os.path as osp
import sys
import tempfile

import numpy as np

from kradar_plugin.distributed import run_context
from kradar_plugin.evaluation.inputs.result_io import new_results_path, write_results_pickle
from kradar_plugin.evaluation.protocols import (ECHOFUSION_AZIMUTH_RANGE, ECHOFUSION_PCD_LIMIT_RANGE,
                                                PROTOCOL_FIELDS)
from kradar_plugin.evaluation.validation import DATASET_EVAL_TYPES

# EchoFusion's evaluation ROI, the defaults when the dataset sets none (one home: evaluation.protocols)
DEFAULT_PCD_LIMIT_RANGE = ECHOFUSION_PCD_LIMIT_RANGE
DEFAULT_AZI_LIMIT_RANGE = ECHOFUSION_AZIMUTH_RANGE
#: result branches evaluated, and the metrics of each (EchoFusion: 2D only for image branches)
RESULT_BRANCHES = (('pts_bbox', DATASET_EVAL_TYPES), ('img_bbox', ('bbox',)))


def _print_log(msg, logger=None, level=logging.INFO):
    try:
        from mmcv.utils import print_log
    except ImportError:  # mmcv absent: plain logging
        logging.getLogger('kradar_plugin').log(level, msg)
        return
    print_log(msg, logger=logger, level=level)


def _logger_dir(logger):
    """Directory of the first file handler of ``logger`` (a runner logger writes into work_dir)."""
    if isinstance(logger, str):
        logger = logging.getLogger(logger)
    if not isinstance(logger, logging.Logger):
        return None
    for handler in logger.handlers:
        filename = getattr(handler, 'baseFilename', None)
        if filename:
            return osp.dirname(filename)
    return None


class KRadarEvalMixin(object):
    """Adds the K-Radar ``evaluate`` (raw results saved first, ROI filter, protocol table, flat metrics)."""

    eval_protocol = 'legacy'
    results_dir = None
    # EchoFusion's GT conversion puts the label's centre z where mmdet3d expects the bottom, so its models
    # output centre z: False. KRadarDataset trains on true bottom z and sets True.
    results_z_is_bottom = False

    # ---- settings read from the host dataset ----
    def _kradar_limits(self):
        pcd = getattr(self, 'pcd_limit_range', None)
        pcd = DEFAULT_PCD_LIMIT_RANGE if pcd is None else tuple(float(v) for v in pcd)
        azi = getattr(self, 'azi_limit_range', None)
        if azi is None and getattr(self, 'max_azimtuth_rad', None) is not None:  # EchoFusion's attribute
            azi = [float(np.degrees(v)) for v in self.max_azimtuth_rad]
        azi = DEFAULT_AZI_LIMIT_RANGE if azi is None else tuple(float(v) for v in azi)
        return pcd, azi

    def _kradar_results_path(self, pklfile_prefix, logger):
        if pklfile_prefix:
            prefix = str(pklfile_prefix)
            return prefix if prefix.endswith('.pkl') else prefix + '_results.pkl'
        directory = self.results_dir or _logger_dir(logger)
        if not directory:
            directory = osp.join(tempfile.gettempdir(), 'kradar_results')
        return new_results_path(directory)

    # ---- the evaluate() hook that mmcv/mmdet eval hooks call ----
    def evaluate(self, results, metric=None, logger=None, pklfile_prefix=None, submission_prefix=None,
                 show=False, out_dir=None, pipeline=None, protocol=None, excluded_samples=None, **kwargs):
        """Evaluate per-frame results against ``self.data_infos`` with the K-Radar evaluator.

        The signature is EchoFusion's ``evaluate`` plus ``protocol`` and the evaluator's options, so mmcv's
        ``EvalHook`` can pass everything an EchoFusion config's ``evaluation`` dict holds (``pipeline=...``
        included). ``results``: one entry per frame of ``self.data_infos``, ``{'pts_bbox': {...}}`` (plus an
        optional ``'img_bbox'`` branch, evaluated in 2D like EchoFusion does) or ``{'boxes_3d', 'scores_3d',
        'labels_3d'}``. The raw results are pickled first (``<pklfile_prefix>_results.pkl``, else under
        ``results_dir``, the logger's work dir or the temp dir) and the path is logged, so a failing
        evaluation loses nothing. With ``pklfile_prefix``/``submission_prefix`` on an mmdet3d ``KittiDataset``
        (EchoFusion's base class), its ``format_results`` also writes what EchoFusion writes there
        (``<prefix>pts_bbox.pkl`` and KITTI text files). ``protocol``: 'legacy', 'kradar', '4drmr', 'revised' or
        'fixed' (default ``self.eval_protocol``, or the preset's); ``preset``: a published setting
        (``kradar_plugin.evaluation.presets``; the dataset's ``CLASSES`` stay the evaluated classes, and the log
        says where they differ from the preset's); other keywords: ``KRadarEvaluator`` options (``benchmark``,
        ``score_threshold``, ``bootstrap``, ...) and protocol
        settings; anything else is ignored with one warning. ``show``/``out_dir``/``pipeline`` go to
        ``self.show`` as in EchoFusion. ``excluded_samples``: the samples the runner skipped (``--skip-bad-samples``),
        already left out of ``results`` and ``self``: the fingerprint line and the metrics say so.
        Returns ``{'<branch>/<metric key>': value}``."""
        saved = run_context.current().take_saved_results()   # the runner's guard pickled them just before
        if saved and pklfile_prefix is None and osp.isfile(saved):
            path, by = saved, ' (by the runner, before evaluate)'   # the same results: not pickled twice
        else:
            path, by = self._kradar_results_path(pklfile_prefix, logger), ''
            write_results_pickle(list(results), path)
        _print_log('K-Radar evaluation: raw results of {} frames saved to {}{}'.format(len(results), path, by),
                   logger=logger)
        if excluded_samples:   # listed beside the results: kradar-eval --excluded-samples leaves them out of the infos
            from kradar_plugin.evaluation.command_line import write_excluded
            _print_log('K-Radar evaluation: the samples left out are listed in {}'.format(
                write_excluded(path, excluded_samples)), logger=logger)
        protocol = self._kradar_protocol(protocol, kwargs)
        try:
            flat = self._kradar_evaluate(results, protocol, logger, kwargs, excluded_samples)
            self._kradar_echofusion_outputs(results, pklfile_prefix, submission_prefix, logger)
        except Exception:
            _print_log('K-Radar evaluation failed; the results are kept in {}. Re-run offline with:\n'
                       '  {}'.format(path, self._kradar_offline_command(
                           path, protocol, dict(kwargs, excluded_samples=excluded_samples))),
                       logger=logger, level=logging.ERROR)
            raise
        if show and hasattr(self, 'show'):
            self.show(results, out_dir, pipeline=pipeline)
        return flat

    def offline_eval_command(self, results_path, **eval_kwargs):
        """For the runner adapter's failure message: the ``kradar-eval`` command for ``results_path``."""
        protocol = self._kradar_protocol(eval_kwargs.get('protocol'), eval_kwargs)
        return self._kradar_offline_command(results_path, protocol, eval_kwargs)

    def _kradar_protocol(self, protocol, kwargs):
        """The protocol asked for: ``protocol``, else the preset's (None) when a preset is given, else
        ``self.eval_protocol`` ('legacy')."""
        if protocol:
            return protocol
        if kwargs.get('preset'):
            return None
        return getattr(self, 'eval_protocol', None) or 'legacy'

    def _kradar_offline_command(self, path, protocol, kwargs):
        """The ``kradar-eval`` command that repeats this evaluation on the saved results: the evaluator's
        (``KRadarEvaluator.offline_command``), or the basic one when its settings cannot be built or have no
        ``kradar-eval`` option."""
        from kradar_plugin.evaluation.command_line import shell_line
        from kradar_plugin.evaluation.command_line import write_excluded
        infos_path = getattr(self, 'ann_file', None) or '<info pickle>'
        try:
            command = self._kradar_evaluator(protocol, DATASET_EVAL_TYPES, kwargs, None, warn=False).offline_command(
                path, infos_path)
        except Exception:  # noqa: BLE001 - settings the evaluator refuses: the evaluation itself says why
            command = None
        command = command or shell_line(['kradar-eval', '--infos', infos_path, '--results', path, '--classes'] +
                                        list(self.CLASSES) + (['--protocol', protocol] if protocol else
                                                              ['--preset', str(kwargs.get('preset'))]))
        if kwargs.get('excluded_samples'):   # the skipped samples: listed beside the results, left out of the infos
            command += ' ' + shell_line(['--excluded-samples', write_excluded(path, kwargs['excluded_samples'])])
        return command

    def _kradar_evaluator(self, protocol, eval_types, kwargs, logger, warn=True):
        """The ``KRadarEvaluator`` of this dataset's settings and the evaluation options ``kwargs`` (options
        of other evaluators dropped, with one warning when ``warn``)."""
        from kradar_plugin.evaluation.evaluator import KRadarEvaluator
        # a preset brings its region; the dataset's (or EchoFusion's default) region applies without one
        pcd, azi = self._kradar_limits() if not kwargs.get('preset') else (None, None)
        call_kwargs = self._kradar_eval_kwargs(KRadarEvaluator, kwargs, logger, warn)
        call_kwargs.setdefault('dt_z_is_bottom', bool(getattr(self, 'results_z_is_bottom', False)))
        call_kwargs.setdefault('box_convention', getattr(self, 'box_convention', None))
        return KRadarEvaluator(list(self.CLASSES), protocol, eval_types, pcd_limit_range=pcd, azi_limit_range=azi,
                               conditions='auto' if 'bev' in eval_types else None, **call_kwargs)

    def _kradar_evaluate(self, results, protocol, logger, kwargs, excluded=None):
        """One ``KRadarEvaluator`` per result branch (the CLI's and ``KRadarMetric``'s object): metrics and,
        when the infos carry conditions, the per-weather table from one conversion of the frames."""
        infos = self.data_infos
        if len(results) != len(infos):
            raise ValueError(
                '{} results for {} frames in data_infos: distributed results were duplicated or truncated, '
                'or the dataset was sliced after inference'.format(len(results), len(infos)))
        flat = {}
        noted = False
        for branch, eval_types in self._kradar_branches(results):
            evaluator = self._kradar_evaluator(protocol, eval_types, kwargs, logger, warn=not noted)
            evaluator.excluded = list(excluded or [])
            name = evaluator.protocols[0].name
            if not noted:
                self._kradar_log_notes(name, evaluator.box_convention, logger)
                noted = True
            evaluator.process(infos, [r[branch] if isinstance(r, dict) and branch in r else r for r in results])
            evaluator.evaluate()
            _print_log('K-Radar evaluation of {} ({} protocol):\n{}'.format(
                branch, name, evaluator.evaluations[0].result_str), logger=logger)
            _print_log(evaluator.fingerprint_log(branch)[1], logger=logger)
            entry = evaluator.condition_log(branch)      # never the reason an evaluation fails
            if entry is not None:
                _print_log(entry[1], logger=logger, level=getattr(logging, entry[0]))
            flat.update(evaluator.flat_metrics(branch))
        return flat

    def _kradar_log_notes(self, protocol, box_convention, logger):
        """Once per evaluation: where legacy can differ from EchoFusion's own numbers, and a warning when the
        loaded checkpoint (its meta, recorded in the run context) was trained under the other box convention."""
        from kradar_plugin.evaluation.inputs.box_convention import (
            convention_mismatch_message, recorded_mmdet3d_version, resolve_box_convention)
        from kradar_plugin.evaluation.protocols import LEGACY_DIFFERENCE_NOTE
        if protocol == 'legacy':
            _print_log(LEGACY_DIFFERENCE_NOTE, logger=logger)
        meta = run_context.current().checkpoint_meta
        recorded = recorded_mmdet3d_version(meta) if meta is not None else None
        message = convention_mismatch_message(box_convention, recorded) if recorded else None
        _print_log('K-Radar evaluation: result boxes read with box_convention={!r}'.format(
            resolve_box_convention(box_convention)), logger=logger)
        if message:
            _print_log(message, logger=logger, level=logging.WARNING)

    @staticmethod
    def _kradar_branches(results):
        """(branch, eval types) to evaluate: the branches the first frame carries; plain result dicts are
        the 'pts_bbox' branch."""
        first = results[0] if len(results) else {}
        present = [(name, types) for name, types in RESULT_BRANCHES if isinstance(first, dict) and name in first]
        return present or [RESULT_BRANCHES[0]]

    def _kradar_echofusion_outputs(self, results, pklfile_prefix, submission_prefix, logger):
        """EchoFusion's side outputs: mmdet3d's KITTI-format pickle (and text files) of the detections."""
        if pklfile_prefix is None and submission_prefix is None:
            return
        if not (hasattr(self, 'format_results') and hasattr(self, 'bbox2result_kitti')):
            _print_log('pklfile_prefix/submission_prefix: the KITTI-format outputs need an mmdet3d '
                       'KittiDataset; only the raw results were written', logger=logger, level=logging.WARNING)
            return
        prefix = str(pklfile_prefix) if pklfile_prefix is not None else None
        if prefix and prefix.endswith('.pkl'):
            prefix = prefix[:-len('.pkl')]
        pts_only = [{'pts_bbox': r['pts_bbox']} if isinstance(r, dict) and 'pts_bbox' in r else r
                    for r in results]
        _, tmp_dir = self.format_results(pts_only, prefix, submission_prefix)
        if tmp_dir is not None:
            tmp_dir.cleanup()

    def _kradar_eval_kwargs(self, func, kwargs, logger, warn=True):
        """The keywords ``func`` (``KRadarEvaluator``) and the protocol table accept; the others (options
        of other evaluators an ``evaluation`` dict may carry) are dropped with one warning."""
        params = inspect.signature(func).parameters
        named = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        reserved = ('self', 'infos', 'results', 'class_names', 'classes', 'protocol', 'eval_types',
                    'pcd_limit_range', 'azi_limit_range', 'conditions', 'grouped')
        known = set(n for n in named if n not in reserved) | set(PROTOCOL_FIELDS)
        dropped = sorted(k for k in kwargs if k not in known)
        if dropped and warn:
            _print_log('K-Radar evaluation ignores the evaluation options {} (not options of this '
                       'evaluator)'.format(dropped), logger=logger, level=logging.WARNING)
        return {k: v for k, v in kwargs.items() if k in known}


def _dataset_registries():
    """mmdet's DATASETS and mmdet3d's (when importable and distinct)."""
    regs = []
    try:
        from mmdet.datasets.builder import DATASETS as MMDET_DATASETS
        regs.append(MMDET_DATASETS)
    except ImportError:
        pass
    try:
        from mmdet3d.datasets.builder import DATASETS as MMDET3D_DATASETS
        if all(r is not MMDET3D_DATASETS for r in regs):
            regs.append(MMDET3D_DATASETS)
    except Exception:  # mmdet3d absent or not importable with this mmcv (it asserts its mmcv range)
        pass
    return regs


def with_kradar_evaluate(cls):
    """A subclass of ``cls`` whose ``evaluate`` is the K-Radar one (returned as is if already patched).
    The subclass keeps ``cls``'s name and is also stored in this module so that it pickles."""
    if getattr(cls, '_kradar_eval_patched', False):
        return cls
    qualname = 'KRadarEvalPatched_{}'.format(cls.__name__)
    existing = getattr(sys.modules[__name__], qualname, None)
    if existing is not None and existing._kradar_original_class is cls:
        return existing
    new_cls = type(cls.__name__, (KRadarEvalMixin, cls), {
        '__doc__': '{} with kradar_plugin\'s K-Radar evaluate().\n\n{}'.format(cls.__name__, cls.__doc__ or ''),
        '__module__': __name__,
        '__qualname__': qualname,
        '_kradar_eval_patched': True,
        '_kradar_original_class': cls,
    })
    setattr(sys.modules[__name__], qualname, new_cls)
    return new_cls


def patch_dataset_evaluate(name, registries=None):
    """Replace the dataset class registered as ``name`` in mmdet's (and mmdet3d's) ``DATASETS`` by
    ``with_kradar_evaluate(cls)``; configs keep ``type=name``. Idempotent. Returns the new class.
    Raises KeyError when no registry knows ``name`` (import the project that registers it first)."""
    registries = _dataset_registries() if registries is None else list(registries)
    patched = None
    for registry in registries:
        cls = registry.module_dict.get(name)
        if cls is None:
            continue
        new_cls = with_kradar_evaluate(cls)
        if new_cls is not cls:
            registry.register_module(name=name, force=True, module=new_cls)
        patched = new_cls
    if patched is None:
        raise KeyError('patch_dataset_evaluate: no dataset named {!r} in {}; import the project that registers '
                       'it before kradar_plugin.adapters.mmcv1.patch_echofusion (custom_imports order)'.format(
                           name, [getattr(r, 'name', r) for r in registries]))
    return patched
