"""``KRadarMetric`` (mmengine ``METRICS``): the K-Radar evaluation of ``kradar_plugin.evaluation`` for
OpenMMLab 2.0 runners -- the same protocols ('legacy', 'revised', 'fixed') and the same metric keys as the
mmcv 1.x ``evaluate`` (``pts_bbox/<kradar_eval key>``) -- fed from ``Det3DDataSample`` predictions
(``pred_instances_3d``: ``bboxes_3d``, ``scores_3d``, ``labels_3d``) and the K-Radar infos of ``ann_file``
(EchoFusion's info list, or a dict holding it under ``infos``/``data_list``), matched by ``sample_idx``
(the position of the frame in that list, as mmengine datasets number their samples).

    val_evaluator = dict(type='KRadarMetric', ann_file=data_root + 'kradar_infos_val.pkl', protocol='fixed')
    val_evaluator = dict(type='KRadarMetric', ann_file=..., protocol='kradar', benchmark='v2', score_threshold=0.3)

When the infos carry K-Radar's conditions (EchoFusion's ``road_type``, ``capture_time``, ``climate``), the
per-weather paper table is logged after the metrics; one ``KRadarEvaluator`` (the object ``kradar-eval`` and
the 1.x dataset evaluation use) computes both from one conversion of the frames.

How the boxes are read: ``box_convention`` (the mmdet3d the model was trained under; None = the dataset's
``metainfo['box_convention']``, else the installed mmdet3d's) and ``dt_z_is_bottom`` (None = the dataset's
``metainfo['results_z_is_bottom']``, else False as for EchoFusion's models); see
``kradar_plugin.evaluation.inputs.box_convention``. The collected results are pickled (numpy only, frame order)
before the evaluation runs, with the infos of the evaluated frames next to them, so a failing evaluation
loses nothing and ``evaluate_saved`` re-runs it offline.
"""
import json
import logging
import os.path as osp
import tempfile

import numpy as np
from mmengine.evaluator import BaseMetric
from mmengine.logging import print_log
from mmengine.registry import METRICS

from kradar_plugin.distributed import run_context
from kradar_plugin.evaluation.inputs.result_io import leaf_to_numpy, new_results_path, write_results_pickle
from kradar_plugin.evaluation.protocols import (BENCHMARKS, ECHOFUSION_AZIMUTH_RANGE, ECHOFUSION_PCD_LIMIT_RANGE,
                                                PROTOCOL_NAMES)
from kradar_plugin.evaluation.validation import DATASET_EVAL_TYPES

#: result branch of the 1.x ``evaluate`` keys, and the metrics evaluated on it
BRANCH = 'pts_bbox'


def _field(obj, name):
    """``obj[name]`` for dicts (``Evaluator.process`` hands metrics ``to_dict()``-ed samples), else
    ``getattr``."""
    if isinstance(obj, dict):
        return obj[name]
    return getattr(obj, name)


def load_kradar_infos(ann_file, trusted=False):
    """The per-frame K-Radar info list of ``ann_file``, read under the untrusted-file policy
    (``KRadarEvaluator.load_infos``; ``trusted``: the plain unpickler)."""
    from kradar_plugin.evaluation.evaluator import KRadarEvaluator
    return KRadarEvaluator.load_infos(ann_file, 'ann_file', trusted=trusted)


def _logger_dir():
    """The directory of the current MMLogger's log file (the runner's work_dir/<timestamp>), or None."""
    from mmengine.logging import MMLogger
    if not MMLogger.check_instance_created(MMLogger.get_current_instance().instance_name):
        return None
    for handler in MMLogger.get_current_instance().handlers:
        filename = getattr(handler, 'baseFilename', None)
        if filename:
            return osp.dirname(filename)
    return None


@METRICS.register_module()
class KRadarMetric(BaseMetric):
    """K-Radar AP (``kradar_plugin.evaluation``) for mmengine evaluators; see the module docstring.

    Args: ``ann_file`` (K-Radar info pickle), ``classes`` (default: the dataset's ``metainfo['classes']``),
    ``protocol`` ('legacy' | 'kradar' | '4drmr' | 'revised' | 'fixed'; default 'legacy', or the preset's),
    ``preset`` (a published setting, ``kradar_plugin.evaluation.presets``: its protocol, region and
    thresholds; the dataset's classes stay the evaluated ones, and the log says where options differ from the
    preset's), ``eval_types`` (default bbox, bev, 3d),
    ``pcd_limit_range``/``azi_limit_range`` (EchoFusion's ROI by default), ``benchmark`` ('v1' | 'v2':
    K-Radar's region, replacing ``pcd_limit_range``), ``score_threshold`` (keep detections with
    ``score > T``), ``dt_z_is_bottom``,
    ``box_convention``, ``results_dir`` (where the results pickle goes; default the log directory, else the
    temp dir), ``collect_device``, ``prefix`` (none by default: keys as the 1.x ``evaluate``), ``groups``
    (user groups of sequences: ``{'clean': '1-20,22'}``, ``['clean=1-20,22']`` or a groups file; logged beside
    the weathers, or instead of them with ``groups_only``), and protocol settings (``distance_edges=...``).
    """

    default_prefix = None
    #: the samples the runner skipped (``--skip-bad-samples``), set by its guard around ``compute_metrics``
    excluded_samples = None

    def __init__(self, ann_file, classes=None, protocol=None, eval_types=DATASET_EVAL_TYPES,
                 pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE, azi_limit_range=ECHOFUSION_AZIMUTH_RANGE,
                 dt_z_is_bottom=None, box_convention=None, results_dir=None, collect_device='cpu',
                 prefix=None, benchmark=None, score_threshold=None, kradar_root=None, label_version=None,
                 labels_dir=None, only_r=False, preset=None, groups=None, groups_only=False, **protocol_overrides):
        super(KRadarMetric, self).__init__(collect_device=collect_device, prefix=prefix)
        if preset is not None:
            from kradar_plugin.evaluation.presets import get_preset
            get_preset(preset)   # an unknown name fails here, at config time
        elif protocol is None:
            protocol = 'legacy'
        if protocol is not None and protocol not in PROTOCOL_NAMES:
            raise ValueError('protocol={!r}: expected one of {}'.format(protocol, list(PROTOCOL_NAMES)))
        self.ann_file = ann_file
        self.classes = list(classes) if classes is not None else None
        self.preset = preset
        self.protocol = protocol
        self.eval_types = tuple(eval_types)
        self.pcd_limit_range = tuple(pcd_limit_range) if pcd_limit_range is not None else None
        self.azi_limit_range = tuple(azi_limit_range) if azi_limit_range is not None else None
        self.dt_z_is_bottom = dt_z_is_bottom
        self.box_convention = box_convention
        self.results_dir = results_dir
        if benchmark is not None and benchmark not in BENCHMARKS:
            raise ValueError('benchmark={!r}: expected one of {}'.format(benchmark, sorted(BENCHMARKS)))
        self.benchmark = benchmark
        if isinstance(score_threshold, (list, tuple)):   # several: one table each, matching once
            self.score_threshold = [float(t) for t in score_threshold]
        else:
            self.score_threshold = None if score_threshold is None else float(score_threshold)
        # K-Radar's own labels of another version for the same frames (kradar_plugin.files.relabel)
        self.relabel = dict(kradar_root=kradar_root, label_version=label_version, labels_dir=labels_dir,
                            only_r=only_r)
        self.protocol_overrides = protocol_overrides
        from kradar_plugin.evaluation.groups import resolve
        resolve(groups)   # a bad group or groups file fails here, at config time
        self.groups, self.groups_only = groups, bool(groups_only)
        self.last_results_file = None
        self.last_result_str = None

    # ---- settings that may come from the dataset ----
    def _meta(self, key, default=None):
        meta = self.dataset_meta or {}
        return meta.get(key, default)

    def class_names(self):
        classes = self.classes or self._meta('classes')
        if not classes:
            raise ValueError('KRadarMetric needs classes: give classes=[...] or a dataset with metainfo '
                             "'classes'")
        return list(classes)

    def z_is_bottom(self):
        if self.dt_z_is_bottom is not None:
            return bool(self.dt_z_is_bottom)
        return bool(self._meta('results_z_is_bottom', False))

    def convention(self):
        return self.box_convention if self.box_convention is not None else self._meta('box_convention')

    # ---- mmengine BaseMetric ----
    def process(self, data_batch, data_samples):
        """Keep plain numpy per sample: ``sample_idx``, ``boxes_3d`` (N, 7+), ``scores_3d``, ``labels_3d``."""
        for sample in data_samples:
            pred = _field(sample, 'pred_instances_3d')
            self.results.append({
                'sample_idx': int(_field(sample, 'sample_idx')),
                'boxes_3d': np.asarray(leaf_to_numpy(_field(pred, 'bboxes_3d')), dtype=np.float64),
                'scores_3d': np.asarray(leaf_to_numpy(_field(pred, 'scores_3d')), dtype=np.float64),
                'labels_3d': np.asarray(leaf_to_numpy(_field(pred, 'labels_3d')), dtype=np.int64),
            })

    def compute_metrics(self, results):
        classes = self.class_names()
        infos = load_kradar_infos(self.ann_file)
        order = [r['sample_idx'] for r in results]
        in_order = order == sorted(order)
        results = sorted(results, key=lambda r: r['sample_idx'])
        bad = [r['sample_idx'] for r in results if not 0 <= r['sample_idx'] < len(infos)]
        if bad:
            raise ValueError('KRadarMetric: sample_idx {} outside the {} frames of {}'.format(
                bad[:5], len(infos), self.ann_file))
        frames = [infos[r['sample_idx']] for r in results]
        # the runner's guard pickled these same results (collected order) just before: not pickled twice
        collected = run_context.current().take_saved_results()
        reuse = collected if (self.results_dir is None and in_order and collected and osp.isfile(collected)) else None
        path = self.save_results(results, frames, results_path=reuse)
        print_log('K-Radar evaluation: results of {} frames saved to {}{}'.format(
            len(results), path, ' (by the runner, before compute_metrics)' if reuse else ''), logger='current')
        evaluator = self.evaluator(classes)
        evaluator.excluded = list(self.excluded_samples or [])
        try:
            evaluator.process(frames, results)
            evaluator.evaluate()
        except Exception:
            print_log('K-Radar evaluation failed; re-run it offline with:\n  ' + self.offline_eval_command(path),
                      logger='current', level=logging.ERROR)
            raise
        self.last_result_str = result_str = evaluator.evaluations[0].result_str
        print_log('K-Radar evaluation of {} ({} protocol, {} frames):\n{}'.format(
            BRANCH, evaluator.protocols[0].name, len(results), result_str), logger='current')
        print_log(evaluator.fingerprint_log(BRANCH)[1], logger='current')
        entry = evaluator.condition_log(BRANCH)        # never the reason an evaluation fails
        if entry is not None:
            print_log(entry[1], logger='current', level=getattr(logging, entry[0]))
        return evaluator.flat_metrics(BRANCH)

    def evaluator(self, classes=None):
        """The ``KRadarEvaluator`` of these settings (the one ``kradar-eval`` and the 1.x evaluate use)."""
        from kradar_plugin.evaluation.evaluator import KRadarEvaluator
        pcd, azi = self.pcd_limit_range, self.azi_limit_range
        if self.preset is not None:   # EchoFusion's ROI is this metric's default, not a choice beside a preset
            pcd = None if pcd == tuple(ECHOFUSION_PCD_LIMIT_RANGE) else pcd
            azi = None if azi == tuple(ECHOFUSION_AZIMUTH_RANGE) else azi
        return KRadarEvaluator(classes or self.class_names(), self.protocol, self.eval_types,
                               pcd_limit_range=pcd, azi_limit_range=azi, preset=self.preset,
                               benchmark=self.benchmark, score_threshold=self.score_threshold, conditions='auto',
                               box_convention=self.convention(), dt_z_is_bottom=self.z_is_bottom(),
                               groups=self.groups, groups_only=self.groups_only,
                               **dict(self.relabel, **self.protocol_overrides))

    # ---- results on disk ----
    def settings(self):
        """The evaluator's settings (``KRadarEvaluator.settings``, JSON-serialisable): what ``evaluate_saved``
        rebuilds it from."""
        return self.evaluator().settings()

    def save_results(self, results, frames, results_path=None):
        """Pickle the results (numpy, frame order), the infos of those frames and the settings (JSON) next
        to each other; returns the results path. ``results_path``: a pickle of these results already on disk
        (only the infos and settings are written next to it)."""
        path = results_path
        if path is None:
            directory = self.results_dir or _logger_dir() or osp.join(tempfile.gettempdir(), 'kradar_results')
            path = new_results_path(directory)
            write_results_pickle(results, path)
        write_results_pickle(frames, sidecar(path, 'infos.pkl'))
        with open(sidecar(path, 'settings.json'), 'w') as f:
            json.dump(self.settings(), f, indent=1, sort_keys=True)
        self.last_results_file = path
        return path

    def offline_eval_command(self, results_path):
        """The command that re-runs this evaluation from ``save_results``' files (same numbers): ``kradar-eval``
        when its options express the settings (EchoFusion's ROI, no protocol overrides), else a Python call of
        ``evaluate_saved``."""
        command = self.evaluator().offline_command(results_path, sidecar(results_path, 'infos.pkl'))
        if command is None:
            return ('python -c "from kradar_plugin.adapters.mmengine.kradar_metric import evaluate_saved; '
                    'print(evaluate_saved(\'{}\')[0])"'.format(results_path))
        return command


def sidecar(results_path, suffix):
    """``<results path without .pkl>_<suffix>``."""
    return results_path[:-len('.pkl')] + '_' + suffix


def evaluate_saved(results_path, protocol=None, trusted=False):
    """Re-run a ``KRadarMetric`` evaluation offline (no runner, no model): ``(result_str,
    metrics)`` from the results pickle that ``KRadarMetric.save_results`` wrote and its sidecar files;
    ``protocol`` overrides the saved one ('legacy', 'kradar', 'revised', 'fixed')."""
    from kradar_plugin.loading import safe_load
    from kradar_plugin.evaluation.evaluator import KRadarEvaluator
    results, frames, settings = safe_load.read([
        ('results', results_path, None), ('infos', sidecar(results_path, 'infos.pkl'), None),
        ('settings', sidecar(results_path, 'settings.json'), None)], trusted=trusted)
    settings = dict(settings)
    settings.update(settings.pop('relabel', None) or {})    # the layout of the first release's sidecars
    if protocol:
        settings['protocol'] = protocol
    evaluator = KRadarEvaluator.from_settings(settings)
    evaluator.process(frames, results)
    evaluator.evaluate()
    return evaluator.evaluations[0].result_str, evaluator.flat_metrics(BRANCH)
