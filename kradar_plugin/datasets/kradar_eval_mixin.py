"""The fixed K-Radar ``evaluate()`` for any dataset class with EchoFusion's info pickles.

Two ways to give an existing project's dataset (e.g. EchoFusion's ``KRadarDataset``) this ``evaluate``
without editing that project:

1. Mixin, in your own code::

       from kradar_plugin.datasets.kradar_eval_mixin import KRadarEvalMixin

       @DATASETS.register_module(force=True)
       class KRadarDataset(KRadarEvalMixin, EchoFusionKRadarDataset):
           pass

2. Registry patch, no new code: replace the registered class by a subclass with the mixin::

       from kradar_plugin.datasets.kradar_eval_mixin import patch_dataset_evaluate
       patch_dataset_evaluate('KRadarDataset')   # after the project registered it

   or from a config, listing the patch module after the project in ``custom_imports`` (it patches the names
   in ``KRADAR_PATCH_DATASETS``, default ``KRadarDataset``)::

       custom_imports = dict(imports=['projects.mmdet3d_plugin', 'kradar_plugin',
                                      'kradar_plugin.datasets.patch_echofusion'],
                             allow_failed_imports=False)

What the mixin needs from the dataset: ``data_infos`` (EchoFusion info dicts; GT is read from it at every
call, so slicing it to the first N frames keeps GT and results consistent), ``CLASSES``, and optionally
``pcd_limit_range`` (default EchoFusion's), ``azi_limit_range`` in degrees or EchoFusion's
``max_azimtuth_rad`` (default +-50 deg), ``eval_protocol`` (default 'legacy'), ``results_z_is_bottom``
(default False: box z is the centre, as EchoFusion's models output it), ``results_dir`` and ``ann_file``.
"""
import inspect
import logging
import os
import os.path as osp
import sys
import tempfile
import time

import numpy as np

from .result_io import normalize_results, write_results_pickle

DEFAULT_PCD_LIMIT_RANGE = (0.0, -6.4, -2.0, 72.0, 6.4, 6.0)
DEFAULT_AZI_LIMIT_RANGE = (-50.0, 50.0)
# keyword arguments that EchoFusion/mmdet3d callers pass and that have no meaning here
_IGNORED_KWARGS = ('show', 'out_dir', 'pipeline', 'jsonfile_prefix')


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
        stamp = time.strftime('%Y%m%d_%H%M%S')
        path = osp.join(directory, 'kradar_results_{}_{}.pkl'.format(stamp, os.getpid()))
        k = 1
        while osp.exists(path):
            path = osp.join(directory, 'kradar_results_{}_{}_{}.pkl'.format(stamp, os.getpid(), k))
            k += 1
        return path

    @staticmethod
    def _kradar_flat_metrics(metrics):
        """EchoFusion's keys under 'pts_bbox/' (4 decimals, as EchoFusion rounds), then the unambiguous
        keys (those not in EchoFusion's 'kradar/...' family) also without the prefix."""
        flat = {}
        for key, value in metrics.items():
            flat['pts_bbox/' + key] = float('{:.4f}'.format(float(value)))
        for key, value in metrics.items():
            if not key.startswith('kradar/') and key not in flat:
                flat[key] = float(value)
        return flat

    # ---- the evaluate() hook that mmcv/mmdet eval hooks call ----
    def evaluate(self, results, metric=None, logger=None, pklfile_prefix=None, submission_prefix=None,
                 protocol=None, **kwargs):
        """Evaluate per-frame results against ``self.data_infos`` with the K-Radar evaluator.

        ``results``: one entry per frame of ``self.data_infos``, ``{'pts_bbox': {...}}`` or ``{'boxes_3d',
        'scores_3d', 'labels_3d'}`` (LiDAR boxes x, y, z_bottom, dx, dy, dz, yaw). The raw results are pickled
        first (``<pklfile_prefix>_results.pkl``, else under ``results_dir``, the logger's work dir or the
        temp dir) and the path is logged, so a failing evaluation loses nothing. ``protocol``: 'legacy',
        'revised' or 'fixed' (default ``self.eval_protocol``). Extra keyword arguments accepted by
        ``kradar_format.evaluate_results`` are passed on. Returns the flat metric dict."""
        path = self._kradar_results_path(pklfile_prefix, logger)
        write_results_pickle(list(results), path)
        _print_log('K-Radar evaluation: raw results of {} frames saved to {}'.format(len(results), path),
                   logger=logger)
        protocol = protocol or getattr(self, 'eval_protocol', None) or 'legacy'
        infos = self.data_infos
        ann_file = getattr(self, 'ann_file', None) or '<info pickle>'
        try:
            if len(results) != len(infos):
                raise ValueError(
                    '{} results for {} frames in data_infos: distributed results were duplicated or truncated, '
                    'or the dataset was sliced after inference'.format(len(results), len(infos)))
            flat_results = normalize_results(results)
            from kradar_plugin.datasets.kradar_format import evaluate_results
            pcd, azi = self._kradar_limits()
            call_kwargs = self._kradar_eval_kwargs(evaluate_results, kwargs, logger)
            call_kwargs.setdefault('dt_z_is_bottom', bool(getattr(self, 'results_z_is_bottom', False)))
            result_str, metrics = evaluate_results(
                infos, flat_results, list(self.CLASSES), protocol=protocol,
                pcd_limit_range=pcd, azi_limit_range=azi, **call_kwargs)
        except Exception:
            _print_log('K-Radar evaluation failed; the results are kept in {}. Re-run offline with:\n'
                       '  kradar-eval --infos {} --results {} --classes {} --protocol {}'.format(
                           path, ann_file, path, ' '.join("'{}'".format(c) for c in self.CLASSES), protocol),
                       logger=logger, level=logging.ERROR)
            raise
        _print_log('K-Radar evaluation ({} protocol):\n{}'.format(protocol, result_str), logger=logger)
        return self._kradar_flat_metrics(metrics)

    @staticmethod
    def _kradar_eval_kwargs(func, kwargs, logger):
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            return dict(kwargs)
        if any(p.kind == p.VAR_KEYWORD for p in params.values()):
            return dict(kwargs)
        accepted = {k: v for k, v in kwargs.items() if k in params}
        dropped = sorted(k for k in kwargs if k not in params and k not in _IGNORED_KWARGS)
        if dropped:
            _print_log('K-Radar evaluation ignores unknown evaluation options {}'.format(dropped),
                       logger=logger, level=logging.WARNING)
        return accepted


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
                       'it before kradar_plugin.datasets.patch_echofusion (custom_imports order)'.format(
                           name, [getattr(r, 'name', r) for r in registries]))
    return patched
