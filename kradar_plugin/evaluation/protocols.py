"""The one table of named K-Radar evaluation protocols.

Every difference between ``legacy`` (EchoFusion's ``kradar_eval``), ``kradar`` (K-Radar's own
``utils/kitti_eval/eval.py``), ``4drmr`` (kaist-avelab/4DR-MR's ``utils/kitti_eval/eval.py``), ``revised``
(K-Radar ``eval_revised.py``) and ``fixed`` (our corrected protocol) is a field of :class:`Protocol`; the rest
of the evaluator reads these fields and never tests a protocol's name. ``BENCHMARKS`` holds K-Radar v1.0 /
v2.0's region and classes; ``presets.py`` bundles a protocol with a paper's region, classes, labels and
confidence thresholds.
"""
import math

#: K-Radar class indices used by the legacy evaluators (integers in ``current_classes`` map through this).
KRADAR_CLASSES = ('Sedan', 'Bus or Truck', 'Motorcycle', 'Bicycle', 'Bicycle Group', 'Pedestrian',
                  'Pedestrian Group', 'Background')

#: K-Radar's class keywords in its KITTI text files (``validate_kitti_conditional``), in KRADAR_CLASSES order:
#: annotations named with them evaluate as the full names
KRADAR_KEYWORDS = ('sed', 'bus', 'mot', 'bic', 'big', 'ped', 'peg', 'bg')

#: EchoFusion's fake 2D box: when every box equals it, 2D/AOS numbers carry no information.
FAKE_2D_BOX = (50.0, 50.0, 150.0, 150.0)

#: KITTI difficulty rules (easy, moderate, hard) as used by the legacy evaluators.
KITTI_MIN_HEIGHT = (40, 25, 25)
KITTI_MAX_OCCLUSION = (0, 1, 2)
KITTI_MAX_TRUNCATION = (0.15, 0.3, 0.5)
KITTI_DIFFICULTIES = ('easy', 'moderate', 'hard')

#: EchoFusion's ``iou_mode`` argument: the IoU thresholds it selects ('all' keeps the protocol's, which are
#: 0.3, 0.5, 0.7 in every built-in protocol, in that order).
IOU_MODES = {'all': None, 'easy': (0.3,), 'mod': (0.5,), 'hard': (0.7,)}

#: GT classes that are ignored (neither TP, FN nor FP source) when evaluating a class: EchoFusion's
#: ``clean_data`` (a KITTI heritage) has ``Person_sitting`` for ``Pedestrian`` and ``Bus or Truck`` for ``Sedan``.
ECHOFUSION_SIMILAR_CLASSES = (('Sedan', 'Bus or Truck'), ('Pedestrian', 'Person_sitting'))

#: Logged once per evaluation by the dataset step: the only place ``legacy`` can differ from EchoFusion.
LEGACY_DIFFERENCE_NOTE = (
    "K-Radar 'legacy' protocol = EchoFusion's kradar_eval rule for rule; with mmdet3d's own "
    "rotate_iou_gpu_eval kernel EchoFusion's numbers differ only for identical rotated boxes, boxes with "
    "collinear/coincident edges (where that kernel is wrong, e.g. IoU 0 for two identical boxes) and IoUs "
    "within ~1e-6 of a threshold (its float32); ours are exact there")

#: EchoFusion's region of interest (x_min, y_min, z_min, x_max, y_max, z_max) in metres, and azimuth (deg).
ECHOFUSION_PCD_LIMIT_RANGE = (0.0, -6.4, -2.0, 72.0, 6.4, 6.0)
ECHOFUSION_AZIMUTH_RANGE = (-50.0, 50.0)

# Field -> meaning. Values: interpolation in {'11of41', 'all41', 'r40'};
# threshold_selection in {'kitti41' (41 score thresholds picked from the TP scores),
# 'every_score' (every detection score: exact precision-recall envelope)};
# z_center: fraction of the height that lies below the stored height value (1.0: the value is taken as
# the box's KITTI bottom, K-Radar #36; 0.5: it is the centre); yaw_offset: added to rotation_y before the
# BEV footprint is built (0: K-Radar #81 quirk, length along yaw + pi/2; -pi/2: length along the heading);
# difficulty in {'kitti', 'distance'}; bbox_2d in {'always', 'if_real'}.
PROTOCOL_FIELDS = (
    'name', 'description', 'iou_thresholds', 'threshold_selection', 'interpolation', 'z_center',
    'yaw_offset', 'difficulty', 'distance_edges', 'drop_frames_without_gt', 'dt_azimuth_filter',
    'echofusion_keys', 'bbox_2d', 'similar_classes', 'pcd_limit_range', 'azimuth_range',
)

_CHOICES = {
    'threshold_selection': ('kitti41', 'every_score'),
    'interpolation': ('11of41', 'all41', 'r40'),
    'difficulty': ('kitti', 'distance'),
    'bbox_2d': ('always', 'if_real'),
}


class Protocol(object):
    """An immutable set of evaluation settings; build variants with :meth:`replace`."""

    __slots__ = PROTOCOL_FIELDS

    def __init__(self, **fields):
        missing = [f for f in PROTOCOL_FIELDS if f not in fields]
        unknown = sorted(set(fields) - set(PROTOCOL_FIELDS))
        if missing or unknown:
            raise ValueError('Protocol: missing fields {} / unknown fields {}'.format(missing, unknown))
        for key, choices in _CHOICES.items():
            if fields[key] not in choices:
                raise ValueError('Protocol {!r}: {}={!r} is not one of {}'.format(
                    fields['name'], key, fields[key], choices))
        ious = tuple(float(v) for v in fields['iou_thresholds'])
        if not ious or any(not (0.0 <= v < 1.0) for v in ious):
            raise ValueError('Protocol {!r}: iou_thresholds={!r} must be non-empty values in [0, 1)'.format(
                fields['name'], fields['iou_thresholds']))
        fields['iou_thresholds'] = ious
        edges = tuple(float(v) for v in fields['distance_edges'])
        if len(edges) < 2 or any(not math.isfinite(v) for v in edges) or any(
                b <= a for a, b in zip(edges[:-1], edges[1:])) or edges[0] < 0:
            raise ValueError('Protocol {!r}: distance_edges={!r} must be >= 2 increasing finite values '
                             '>= 0'.format(fields['name'], fields['distance_edges']))
        fields['distance_edges'] = edges
        fields['pcd_limit_range'] = tuple(float(v) for v in fields['pcd_limit_range'])
        fields['azimuth_range'] = tuple(float(v) for v in fields['azimuth_range'])
        if len(fields['pcd_limit_range']) != 6 or len(fields['azimuth_range']) != 2:
            raise ValueError('Protocol {!r}: pcd_limit_range needs 6 values and azimuth_range 2'.format(
                fields['name']))
        fields['similar_classes'] = tuple((str(a), str(b)) for a, b in fields['similar_classes'])
        for key in PROTOCOL_FIELDS:
            object.__setattr__(self, key, fields[key])

    def __setattr__(self, key, value):
        raise AttributeError('Protocol is immutable; use .replace({}=...)'.format(key))

    def as_dict(self):
        return dict((f, getattr(self, f)) for f in PROTOCOL_FIELDS)

    def replace(self, **overrides):
        """A copy with some fields changed (unknown field names raise ValueError)."""
        unknown = sorted(set(overrides) - set(PROTOCOL_FIELDS))
        if unknown:
            raise ValueError('unknown protocol setting(s) {}; known: {}'.format(unknown, PROTOCOL_FIELDS))
        fields = self.as_dict()
        fields.update(overrides)
        return Protocol(**fields)

    def column_labels(self):
        """Names of the difficulty columns (KITTI difficulties, or 'all' plus the distance bins)."""
        if self.difficulty == 'kitti':
            return KITTI_DIFFICULTIES
        edges = self.distance_edges
        return ('all',) + tuple('{:g}-{:g}m'.format(a, b) for a, b in zip(edges[:-1], edges[1:]))

    def __repr__(self):
        return 'Protocol({})'.format(', '.join('{}={!r}'.format(f, getattr(self, f))
                                               for f in PROTOCOL_FIELDS))

    def __eq__(self, other):
        return isinstance(other, Protocol) and self.as_dict() == other.as_dict()

    def __hash__(self):
        return hash(tuple(sorted((k, repr(v)) for k, v in self.as_dict().items())))


_COMMON = dict(
    iou_thresholds=(0.3, 0.5, 0.7),
    distance_edges=(0.0, 30.0, 50.0, 72.0),
    pcd_limit_range=ECHOFUSION_PCD_LIMIT_RANGE,
    azimuth_range=ECHOFUSION_AZIMUTH_RANGE,
)

#: The table. ``legacy`` == EchoFusion's kradar_eval (except a correct IoU and no crashes).
PROTOCOLS = {
    'legacy': Protocol(
        name='legacy',
        description="EchoFusion's kradar_eval: 41 thresholds, 11-point average, bottom-origin height, yaw "
                    "without -pi/2, KITTI difficulty columns, Bus or Truck GT ignored for Sedan, frames without "
                    "GT dropped",
        threshold_selection='kitti41', interpolation='11of41', z_center=1.0, yaw_offset=0.0,
        difficulty='kitti', drop_frames_without_gt=True, dt_azimuth_filter=False, echofusion_keys=True,
        bbox_2d='always', similar_classes=ECHOFUSION_SIMILAR_CLASSES, **_COMMON),
    # eval_revised.py carries the KITTI rules ('Pedestrian'/'Person_sitting', 'Car'/'Van') but compares them
    # with its own abbreviated class names ('sed', 'ped', ...), so they never fire: no ignored neighbours.
    'revised': Protocol(
        name='revised',
        description='K-Radar eval_revised.py: 41 thresholds averaged over all 41 points, centre-origin '
                    'height, yaw without -pi/2, KITTI difficulty columns, frames without GT dropped',
        threshold_selection='kitti41', interpolation='all41', z_center=0.5, yaw_offset=0.0,
        difficulty='kitti', drop_frames_without_gt=True, dt_azimuth_filter=False, echofusion_keys=False,
        bbox_2d='always', similar_classes=(), **_COMMON),
    'fixed': Protocol(
        name='fixed',
        description='corrected: length along the heading (yaw - pi/2), centre-origin height, exact R40 '
                    '(40 recall positions), false positives in frames without GT count, distance bins, '
                    '2D/AOS only with real 2D boxes',
        threshold_selection='every_score', interpolation='r40', z_center=0.5, yaw_offset=-math.pi / 2,
        difficulty='distance', drop_frames_without_gt=False, dt_azimuth_filter=True,
        echofusion_keys=False, bbox_2d='if_real', similar_classes=ECHOFUSION_SIMILAR_CLASSES, **_COMMON),
}

# K-Radar's utils/kitti_eval/eval.py: EchoFusion's rules except the ignored neighbour class: its KITTI
# 'Car'/'Van' and 'Pedestrian'/'Person_sitting' rules compare K-Radar's abbreviated names ('sed', ...) and
# never fire, so 'Bus or Truck' GT is a plain other class (EchoFusion ignores it for Sedan)
PROTOCOLS['kradar'] = PROTOCOLS['legacy'].replace(
    name='kradar', similar_classes=(), echofusion_keys=False,
    description="K-Radar eval.py: 41 thresholds, 11-point average, bottom-origin height, yaw without -pi/2, "
                "KITTI difficulty columns, no ignored neighbour class, frames without GT dropped")

# 4DR-MR (kaist-avelab/4DR-MR @e7aac90, utils/kitti_eval/eval.py, called by its pipelines'
# validate_kitti_conditional): K-Radar's eval.py with one line changed, get_official_eval_result's default
# z_center=0.5 instead of 1.0 -- still the 11-of-41 average, unlike eval_revised.py's 41 points
PROTOCOLS['4drmr'] = PROTOCOLS['kradar'].replace(
    name='4drmr', z_center=0.5,
    description="4DR-MR's eval.py (K-Radar eval.py with z_center 0.5): 41 thresholds, 11-point average, "
                "centre-origin height, yaw without -pi/2, KITTI difficulty columns, no ignored neighbour class, "
                "frames without GT dropped")

#: every protocol of the table, in the order ``--protocol all`` evaluates them (``fixed`` last: the compact
#: table's difference column is the last minus the first)
PROTOCOL_NAMES = ('legacy', 'kradar', '4drmr', 'revised', 'fixed')

#: K-Radar's benchmarks: the region of interest (x_min, y_min, z_min, x_max, y_max, z_max, metres) and the
#: classes its tables report; combinable with every protocol.
BENCHMARKS = {
    'v1': dict(pcd_limit_range=(0.0, -6.4, -2.0, 72.0, 6.4, 6.0), classes=('Sedan',)),
    'v2': dict(pcd_limit_range=(0.0, -16.0, -2.0, 72.0, 16.0, 7.6), classes=('Sedan', 'Bus or Truck')),
}


def get_protocol(protocol='legacy', *, iou_mode='all', **overrides):
    """A :class:`Protocol` from a name (or a Protocol), with optional field overrides.

    ``iou_mode`` is EchoFusion's argument: 'all' keeps the protocol's ``iou_thresholds``; 'easy', 'mod',
    'hard' select 0.3, 0.5, 0.7 alone (and cannot be combined with an ``iou_thresholds`` override).
    """
    if not isinstance(iou_mode, str) or iou_mode not in IOU_MODES:
        raise ValueError('iou_mode={!r}: choose one of {} (EchoFusion\'s 4th positional argument of '
                         'kradar_eval; pass eval_types=... by keyword)'.format(iou_mode, sorted(IOU_MODES)))
    if IOU_MODES[iou_mode] is not None:
        if 'iou_thresholds' in overrides:
            raise ValueError('give either iou_mode={!r} or iou_thresholds={!r}, not both'.format(
                iou_mode, overrides['iou_thresholds']))
        overrides = dict(overrides, iou_thresholds=IOU_MODES[iou_mode])
    if protocol is not None and not isinstance(protocol, Protocol) and protocol not in PROTOCOLS:
        raise ValueError('unknown protocol {!r}; choose one of {}'.format(protocol, PROTOCOL_NAMES))
    base = protocol if isinstance(protocol, Protocol) else PROTOCOLS[protocol or 'legacy']
    return base.replace(**overrides) if overrides else base
