"""``KRadarEvaluator``: the one K-Radar evaluation object that ``kradar-eval``, the mmcv 1.x dataset mixin
and mmengine's ``KRadarMetric`` all use, so every feature (protocols, benchmarks, conditions, score
threshold, bootstrap, comparison, tables) exists on every path with one implementation.

The shape of detectron2's ``DatasetEvaluator``: settings in the constructor, :meth:`reset`,
:meth:`process` per batch or frame (EchoFusion infos and the model's per-frame results), :meth:`evaluate`
(flat metrics, ``kradar_eval``'s keys); :meth:`settings` / :meth:`from_settings` to save and restore it,
:meth:`offline_command` for the ``kradar-eval`` line that repeats it. :meth:`evaluate_gathered` is the step
below, on frames already in columns (what the CLI's readers and worker processes feed).

``kradar_eval()`` stays EchoFusion's drop-in function (``kradar_eval.py``); this object adds what a dataset
evaluation needs around it. Both run the evaluation engine (``engine``): one matching per protocol and
model, from which the pooled AP, every threshold, group and bootstrap draw are read.
"""
from .command_line import shell_line
from .engine import EventTable, fields_read, prepare
from .kradar_eval import ECHOFUSION_EVAL_TYPES
from .protocols import BENCHMARKS, Protocol, get_protocol
from .validation import resolve_classes

#: the condition keys EchoFusion's infos carry at the top level
CONDITION_KEYS = ('road_type', 'capture_time', 'climate')


class KRadarEvaluator(object):
    """K-Radar evaluation of model results against EchoFusion infos (see the module docstring).

    Args: ``classes``; ``protocol`` (a name or Protocol, or a list of them: the first one's metrics are
    returned, all are evaluated on overlaps computed once); ``eval_types`` ('bbox', 'bev', '3d');
    ``iou_mode`` (EchoFusion's); ``benchmark`` ('v1' | 'v2': K-Radar's region, replacing
    ``pcd_limit_range``); ``pcd_limit_range`` / ``azi_limit_range`` (None: the protocol's, EchoFusion's
    ROI); ``score_threshold`` (keep detections with ``score > T``); ``conditions`` ('auto': from the infos
    when they carry ``road_type``, ``capture_time`` and ``climate``; a list with one row per frame; None:
    no groups); ``grouped`` (None: groups when conditions, a comparison, a bootstrap or a score threshold
    ask for them; True: always, ``total`` at least); ``bootstrap`` / ``seed`` (intervals resampling
    sequences); ``box_convention`` / ``dt_z_is_bottom`` (how result boxes are read, ``inputs.box_convention``);
    ``kradar_root`` (dataset root(s)) with ``label_version`` / ``labels_dir`` / ``only_r``: the GT and
    conditions are read from K-Radar's label files of that version for the infos' frames (joined by
    ``annos['label_file']``, ``kradar_plugin.files.relabel``); other keywords: protocol settings
    (``distance_edges=...``). ``benchmark='v2'`` on labels not recorded as v2.0/v2.1 warns once
    (``label_versions``). ``score_threshold`` may be a list (K-Radar's pipeline runs 0.3, 0.5, 0.7): matching
    runs once, ``groups_at`` / ``evaluations_at`` hold one entry per threshold, the first is the headline.
    ``preset`` (a name of ``presets.PRESETS``): the protocol, region, classes and thresholds of a published
    setting; arguments given beside it (not None) override it and ``preset_overrides`` says which.
    ``groups``: user groups of sequences (``groups.resolve``) beside the conditions (``groups_only``: instead).
    ``curves``: fill each Evaluation's precision-recall ``curves`` (for plots; off: not computed).
    """

    def __init__(self, classes=None, protocol=None, eval_types=ECHOFUSION_EVAL_TYPES, iou_mode='all', benchmark=None,
                 pcd_limit_range=None, azi_limit_range=None, score_threshold=None, conditions='auto', bootstrap=0,
                 seed=0, box_convention=None, dt_z_is_bottom=False, grouped=None, kradar_root=None,
                 label_version=None, labels_dir=None, only_r=False, preset=None, groups=None, groups_only=False,
                 curves=False, **protocol_overrides):
        self.preset = None
        self.preset_overrides = []
        if preset is not None:
            from .presets import apply, get_preset
            self.preset = get_preset(preset).name
            chosen, self.preset_overrides = apply(
                preset, protocol=protocol, classes=None if classes is None else tuple(classes),
                pcd_limit_range=BENCHMARKS[benchmark]['pcd_limit_range'] if benchmark in BENCHMARKS else
                pcd_limit_range, azimuth_range=azi_limit_range, score_thresholds=_thresholds(score_threshold))
            protocol, classes = chosen['protocol'], chosen['classes']
            score_threshold = chosen['score_thresholds']
            if benchmark is None:
                pcd_limit_range = chosen['pcd_limit_range']
            azi_limit_range = chosen['azimuth_range']
        if classes is None:
            classes = BENCHMARKS[benchmark]['classes'] if benchmark in BENCHMARKS else ('Sedan',)
        protocol = 'legacy' if protocol is None else protocol
        if benchmark is not None and benchmark not in BENCHMARKS:
            raise ValueError('benchmark={!r}: K-Radar benchmarks are {}'.format(benchmark, sorted(BENCHMARKS)))
        if int(bootstrap) < 0:
            raise ValueError('bootstrap must be >= 0, got {}'.format(bootstrap))
        self.classes = list(classes)
        self.protocol = protocol
        self.eval_types = tuple(eval_types)
        self.iou_mode = iou_mode
        self.benchmark = benchmark
        self.pcd_limit_range = None if pcd_limit_range is None else tuple(float(v) for v in pcd_limit_range)
        self.azi_limit_range = None if azi_limit_range is None else tuple(float(v) for v in azi_limit_range)
        #: every confidence threshold asked for (None: every detection); ``score_threshold`` is the first
        self.score_thresholds = _thresholds(score_threshold) or (None,)
        self.score_threshold = self.score_thresholds[0]
        #: the label versions the GT records (set by :meth:`gt_infos` and the CLI); None: not known
        self.label_versions = None
        #: whether the protocol's region was applied to the inputs: by :meth:`evaluate_gathered` on infos and
        #: results, not on frames in the evaluator's layout (annotation lists are used as given)
        self.region_filtered = False
        self.conditions = conditions
        self.bootstrap = int(bootstrap)
        self.seed = int(seed)
        self.box_convention = box_convention
        self.dt_z_is_bottom = bool(dt_z_is_bottom)
        self.grouped = grouped
        self.curves = bool(curves)
        if (label_version or labels_dir or only_r) and not kradar_root:
            raise ValueError('label_version/labels_dir/only_r need kradar_root (the dataset root with the '
                             'sequence folders)')
        self.kradar_root = [kradar_root] if isinstance(kradar_root, str) else (
            list(kradar_root) if kradar_root else None)
        self.label_version = label_version
        self.labels_dir = labels_dir
        self.only_r = bool(only_r)
        self.protocol_overrides = dict(protocol_overrides)
        overrides = dict(protocol_overrides)
        region = BENCHMARKS[benchmark]['pcd_limit_range'] if benchmark else self.pcd_limit_range
        if region is not None:
            overrides['pcd_limit_range'] = tuple(region)
        if self.azi_limit_range is not None:
            overrides['azimuth_range'] = self.azi_limit_range
        self.protocols = [get_protocol(p, iou_mode=iou_mode, **overrides) for p in self._given_protocols()]
        from .groups import resolve
        self.user_groups, self.groups_only, self.group_notes = resolve(groups), bool(groups_only), []
        self.evaluations = []
        self.evaluations_at = self.groups = self.groups_at = self.group_error = None
        #: samples left out (skipped after a failure: dicts of index, identity, type, message); stated by
        #: :meth:`fingerprint` and :meth:`flat_metrics`
        self.excluded = []
        self.reset()

    # ---- detectron2's DatasetEvaluator ----
    def reset(self):
        """Forget the processed frames."""
        self._infos = []
        self._results = []

    def process(self, infos, results):
        """Add frames: EchoFusion info dicts and, in the same order, the model's per-frame results
        (``{'boxes_3d', 'scores_3d', 'labels_3d'}``, as tensors, arrays or mmdet3d box objects)."""
        from kradar_plugin.evaluation.inputs.kradar_columns import check_frame_counts
        infos, results = list(infos), list(results)
        check_frame_counts(len(infos), len(results))
        self._infos.extend(infos)
        self._results.extend(results)

    def evaluate(self):
        """Evaluate the processed frames; returns the first protocol's flat metrics (``kradar_eval``'s
        keys). ``self.evaluations`` holds every protocol's Evaluation, ``self.groups`` the condition groups
        ({protocol name: groups}) when there are conditions."""
        from kradar_plugin.evaluation.inputs.kradar_columns import (check_frame_counts, gather_infos,
                                                                    gather_result_frames)
        check_frame_counts(len(self._infos), len(self._results))
        infos = self.gt_infos(self._infos)
        self.evaluate_gathered(gather_infos(infos), gather_result_frames(self._results, tuple(self.classes)),
                               self.condition_rows(infos))
        return dict(self.evaluations[0].ap_dict)

    def evaluate_gathered(self, gt, dt, rows=None, other=None, progress=None):
        """The step below :meth:`evaluate`, on frames already in columns: EchoFusion infos and results gathered
        (``kradar_columns``: ``gather_infos`` and ``gather_result_frames``, e.g. in the CLI's worker
        processes), converted here under each protocol's region; or frames in the evaluator's layout
        (annotation lists or ``validation.CheckedSide``: ``kradar-eval --gt-annos`` and ``--kitti-dir``), used
        as given. Each protocol's frame rule applies either way. ``rows``: one condition row per frame or None;
        ``other``: a second model's frames, in the same form (a comparison), or None; ``progress(n_frames)``: a
        bar. Returns (Evaluations, {protocol name: groups} or None); groups that fail for conditions found in
        the infos (``conditions='auto'``) leave their error in ``self.group_error`` instead of raising."""
        from kradar_plugin.evaluation.inputs.kradar_columns import Gathered
        if not isinstance(gt, Gathered):
            return self._evaluate_frames([(gt, dt, other)], rows, progress)
        from kradar_plugin.evaluation.inputs.box_convention import resolve_box_convention
        from kradar_plugin.evaluation.inputs.kradar_columns import Converted
        classes = tuple(self.classes)
        self.region_filtered = True
        convention = resolve_box_convention(self.box_convention)
        conv = Converted(gt, dt, classes, convention, self.dt_z_is_bottom)
        conv_b = Converted(gt, other, classes, convention, self.dt_z_is_bottom) if other is not None else None
        fields = fields_read(self.protocols, 'all', self.eval_types)
        inputs = []
        for proto in self.protocols:
            gt_side, dt_side = conv.sides(proto, fields)
            inputs.append((gt_side, dt_side, conv_b.sides(proto, fields)[1] if conv_b is not None else None))
        return self._evaluate_frames(inputs, rows, progress)

    def gt_infos(self, infos):
        """``infos`` with the GT this evaluator scores against: relabelled from ``kradar_root`` when given;
        warns once when the benchmark is defined on other labels than the infos record."""
        import warnings
        from .label_versions import LabelVersionWarning, label_versions
        from .presets import label_warning
        infos = self.relabelled(infos, 'the dataset\'s infos')
        self.label_versions = label_versions(infos)
        message = label_warning(self.preset, self.label_versions, self.benchmark)
        if message:
            warnings.warn(message, LabelVersionWarning)
        return infos

    def relabelled(self, infos, what):
        """``infos`` with K-Radar's ``label_version`` labels and conditions from ``kradar_root``
        (``kradar_plugin.files.relabel``; ``what`` names the infos in errors), or ``infos`` without a root."""
        if not self.kradar_root:
            return infos
        from kradar_plugin.files.labels import normalize_version
        from kradar_plugin.files.relabel import relabel_infos
        from kradar_plugin.files.tree import KRadarTree
        tree = KRadarTree(self.kradar_root, normalize_version(self.label_version or 'v1.0'), self.labels_dir)
        return relabel_infos(infos, tree, only_r=self.only_r, what=what)

    # ---- conditions, and the engine under evaluate_gathered ----
    def condition_rows(self, infos):
        """One condition row per frame, as ``conditions`` says (None: no groups)."""
        from . import conditions as cond
        if self.conditions is None or self.conditions is False:
            return None
        if isinstance(self.conditions, str):
            if self.conditions != 'auto':
                raise ValueError("conditions={!r}: 'auto', a list of rows or None".format(self.conditions))
            if not infos or any(k not in info for info in infos for k in CONDITION_KEYS):
                return None
            return cond.from_infos(infos)
        rows = list(self.conditions)
        if len(rows) != len(infos):
            raise ValueError('conditions describe {} frames but {} frames are evaluated'.format(
                len(rows), len(infos)))
        return rows

    def _evaluate_frames(self, inputs, rows, progress):
        """:meth:`evaluate_gathered` on sides in the evaluator's layout: ``inputs``, one (gt, dt, other) shared by
        every protocol or one per protocol, each prepared once (checked, overlaps) and matched once per
        protocol and model; the pooled AP at every threshold and every group are read from those tables."""
        from .grouped import groups_at
        self.group_error = None
        shared = len(inputs) == 1
        thresholds = list(self.score_thresholds)
        grouped = (bool(self.grouped or self.bootstrap or self.user_groups) or rows is not None
                   or inputs[0][2] is not None or self.score_thresholds != (None,))
        groups = {}
        groups_by_threshold = [{} for _ in thresholds]
        at = [[] for _ in thresholds]
        sides = classes = None
        for n, proto in enumerate(self.protocols):
            gt, dt, other = inputs[0 if shared else n]
            if n == 0 or not shared:
                reading = self.protocols if shared else [proto]
                sides = [prepare(gt, dt, reading, self.eval_types)] + (
                    [prepare(gt, other, reading, self.eval_types)] if other is not None else [])
            classes = classes or resolve_classes(self.classes)
            tables = [EventTable(proto, side, classes, self.eval_types) for side in sides]
            bar = progress(sides[0].frames.n_frames) if progress is not None else None
            for n_t, ev in enumerate(tables[0].match(thresholds, self.curves, keep=grouped, progress=bar)):
                at[n_t].append(ev)
            for table in tables[1:]:
                table.match(keep=True)
            if not grouped:
                continue
            if self.user_groups:
                from .groups import check
                self.group_notes = check(self.user_groups, rows)
            try:
                # group metrics carry the ``--json`` keys: 2D only where the protocol reports it
                types = tuple(t for t in self.eval_types if t != 'bbox' or proto.bbox_2d == 'if_real')
                per_threshold = groups_at(tables, rows, thresholds, types or self.eval_types, self.bootstrap,
                                          self.seed, self.user_groups, self.groups_only,
                                          progress(sides[0].frames.n_frames) if progress else None)
                for n_t, one in enumerate(per_threshold):
                    groups_by_threshold[n_t][proto.name] = one
                groups[proto.name] = per_threshold[0]
            except Exception as exc:  # noqa: BLE001 - see below
                if self.conditions != 'auto' or self.grouped or other is not None or self.user_groups:
                    raise
                # conditions found in the infos are extra: the metrics stand, the caller says why no table
                self.group_error = exc
        self.evaluations = at[0]
        self.evaluations_at = at
        self.groups = groups or None
        self.groups_at = [g or None for g in groups_by_threshold] if groups else None
        return self.evaluations, self.groups

    def fingerprint(self, proto=None, score_threshold=None):
        """The one-line scoring statement (``report.fingerprint``) of ``proto`` (default: the first protocol)
        at ``score_threshold`` (default: the first), with the recorded label version and the preset."""
        from .report import fingerprint
        proto = self.protocols[0] if proto is None else proto
        versions = [v for v in (self.label_versions or []) if v is not None]
        if self.label_versions and None in self.label_versions:
            versions.append('unknown')
        label = '/'.join(versions) if versions else (
            self.label_version if self.kradar_root and self.label_version else None)
        preset = self.preset
        if preset and self.preset_overrides:
            preset = '{} with {}'.format(preset, ', '.join(self.preset_overrides))
        threshold = self.score_threshold if score_threshold is None else score_threshold
        return fingerprint(proto, self.classes, threshold, label, preset, self.region_filtered, self.excluded)

    def table(self, fmt='markdown', delta=False):
        """K-Radar's paper table (Total and the seven weathers; AP3D, APBEV, #GT) of the first protocol's
        groups at each of its IoU thresholds, or None without groups."""
        from .tables import render
        if not self.groups:
            return None
        proto = self.protocols[0]
        return render(self.groups[proto.name], self.classes, proto.iou_thresholds, fmt, delta=delta,
                      caption=self.fingerprint(proto))

    # ---- save / restore / repeat offline ----
    def _given_protocols(self):
        return self.protocol if isinstance(self.protocol, (list, tuple)) else [self.protocol]

    def settings(self):
        """The constructor's arguments, JSON-serialisable (conditions: 'auto' or None)."""
        from .groups import group_option
        names = [p.name if isinstance(p, Protocol) else p for p in self._given_protocols()]
        return {'classes': list(self.classes), 'protocol': names if len(names) > 1 else names[0],
                'eval_types': list(self.eval_types), 'iou_mode': self.iou_mode, 'benchmark': self.benchmark,
                'pcd_limit_range': list(self.pcd_limit_range) if self.pcd_limit_range is not None else None,
                'azi_limit_range': list(self.azi_limit_range) if self.azi_limit_range is not None else None,
                'score_threshold': (self.score_threshold if len(self.score_thresholds) == 1
                                    else list(self.score_thresholds)),
                'conditions': self.conditions if isinstance(self.conditions, str) else None,
                'bootstrap': self.bootstrap, 'seed': self.seed, 'box_convention': self.box_convention,
                'dt_z_is_bottom': self.dt_z_is_bottom, 'grouped': self.grouped,
                'kradar_root': self.kradar_root, 'label_version': self.label_version,
                'labels_dir': self.labels_dir, 'only_r': self.only_r, 'preset': self.preset,
                'groups': [group_option(g) for g in self.user_groups] or None, 'groups_only': self.groups_only,
                'curves': self.curves, 'protocol_overrides': dict(self.protocol_overrides)}

    @classmethod
    def from_settings(cls, settings):
        settings = dict(settings)
        overrides = settings.pop('protocol_overrides', None) or {}
        return cls(**dict(settings, **overrides))

    def offline_command(self, results_path, infos_path):
        """The ``kradar-eval`` line that repeats this evaluation on saved files (every value shell-quoted), or
        None when a setting has no option (protocol overrides, a non-default ROI, explicit condition rows)."""
        from kradar_plugin.evaluation.inputs.box_convention import resolve_box_convention
        from .groups import group_option
        from .presets import get_preset
        from .protocols import ECHOFUSION_AZIMUTH_RANGE, ECHOFUSION_PCD_LIMIT_RANGE
        if self.protocol_overrides or not isinstance(self.conditions, (str, type(None))) or any(
                isinstance(p, Protocol) for p in self._given_protocols()):
            return None
        preset = get_preset(self.preset) if self.preset else None
        region = (None, tuple(ECHOFUSION_PCD_LIMIT_RANGE)) + ((tuple(preset.pcd_limit_range),) if preset else ())
        azimuth = (None, tuple(ECHOFUSION_AZIMUTH_RANGE)) + ((tuple(preset.azimuth_range),) if preset else ())
        if (self.pcd_limit_range not in region and not self.benchmark) or self.azi_limit_range not in azimuth:
            return None   # (--preset sets its own region and azimuth; EchoFusion's are the default)
        names = [p.name for p in self.protocols]
        parts = ['kradar-eval', '--infos', infos_path, '--results', results_path, '--classes'] + list(self.classes)
        parts += ['--protocol', names[0] if len(names) == 1 else 'all', '--eval-types'] + list(self.eval_types)
        parts += ['--iou-mode', self.iou_mode] if self.iou_mode != 'all' else []
        parts += ['--benchmark', self.benchmark] if self.benchmark else []
        parts += ['--preset', self.preset] if self.preset else []
        if self.score_thresholds != (None,):
            parts += ['--score-threshold'] + ['{!r}'.format(t) for t in self.score_thresholds]
        parts += ['--bootstrap', str(self.bootstrap), '--seed', str(self.seed)] if self.bootstrap else []
        parts += [p for g in self.user_groups for p in ('--group', group_option(g))]
        parts += ['--groups-only'] if self.groups_only and self.user_groups else []
        parts.append('--box-convention={}'.format(resolve_box_convention(self.box_convention)))
        parts += ['--dt-z-is-bottom'] if self.dt_z_is_bottom else []
        if self.kradar_root:   # a relabelled evaluation
            parts += ['--kradar-root'] + list(self.kradar_root)
            parts += ['--label-version', str(self.label_version)] if self.label_version else []
            parts += ['--labels-dir', self.labels_dir] if self.labels_dir else []
            parts += ['--only-r'] if self.only_r else []
        return shell_line(parts)

    # ---- what every adapter logs and returns ----
    def flat_metrics(self, branch):
        """The first protocol's metrics as ``{'<branch>/<key>': AP}`` rounded to 4 decimals, as EchoFusion (and
        every adapter) returns them; with excluded samples, ``<branch>/samples_excluded`` too."""
        flat = flatten_metrics(self.evaluations[0].ap_dict, branch)
        flat.update({'{}/samples_excluded'.format(branch): len(self.excluded)} if self.excluded else {})
        return flat

    def condition_log(self, branch):
        """``(level, message)`` of the per-condition table for the log (level 'INFO', or 'WARNING' when the
        table was skipped for a problem in the infos' conditions), or None without groups."""
        if self.group_error is not None:
            exc = self.group_error
            return 'WARNING', 'K-Radar per-condition table skipped: {}: {}'.format(type(exc).__name__, exc)
        table = self.table()
        if not table:
            return None
        return 'INFO', 'K-Radar evaluation of {} per condition ({} protocol):\n{}{}'.format(
            branch, self.protocols[0].name, ''.join('note: {}\n'.format(n) for n in self.group_notes), table)

    def fingerprint_log(self, branch):
        """``(level, message)``: the log line stating the scoring of ``branch``'s metrics (and any preset
        option overridden), for every adapter to log once per evaluation."""
        return 'INFO', '{}: {}'.format(branch, self.fingerprint())

    @staticmethod
    def load_infos(path, what='ann_file', trusted=False):
        """The per-frame info list of a pickle (or ``.npz``) a user names, read under the untrusted-file policy
        (``safe_load``: names checked, numpy objects rebuilt, limits, a child process; ``trusted``: the plain
        unpickler). A dict holding ``infos`` or ``data_list`` (mmdet3d 1.x) gives that list."""
        from kradar_plugin.evaluation.inputs.kradar_columns import info_list
        from ..loading import safe_load
        try:
            return info_list(safe_load.read_one(path, what, trusted=trusted))
        except ValueError as exc:
            raise ValueError('{}: {}'.format(path, exc))


def _thresholds(value):
    """A tuple of confidence thresholds (floats, None for 'every detection') from one value or a list;
    None when ``value`` is None."""
    if value is None:
        return None
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        raise ValueError('score_threshold: an empty list; give at least one threshold or None')
    out = tuple(None if v is None else float(v) for v in values)
    if len(set(out)) != len(out):
        raise ValueError('score_threshold {}: a threshold is repeated'.format(list(out)))
    return out


def flatten_metrics(metrics, branch):
    """``{'<branch>/<key>': value rounded to 4 decimals}`` (EchoFusion rounds its metric dict so)."""
    return dict(('{}/{}'.format(branch, key), float('{:.4f}'.format(float(value)))) for key, value in metrics.items())
