"""EchoFusion infos and model results -> the evaluator's columns, all frames at once (pure numpy).

Converting frame by frame cost about 0.5 ms of numpy calls per frame (10 s for 20,000 frames, per
protocol), twenty times the evaluation itself. Here the only per-frame Python reads each frame's arrays
and checks their shapes; the region-of-interest and class filters, the axis and box-convention
conversions and the value checks then run once over the concatenation. Every step is element-wise or a
row selection, so the values are those of converting each frame alone. What it mirrors (EchoFusion's
``format_anno`` / ``convert_valid_bboxes``, mmdet3d's ``bbox2result_kitti``) is described in
``kradar_format``; errors name the frame as ``infos[i]`` / ``results[i]``.

Every frame's info and result is read and checked, also the frames a protocol then drops (converting
frame by frame skipped the results of frames without GT under ``legacy``): a broken result is an error
under every protocol. Box columns after the seventh (velocities) are neither read nor checked.
"""
import numpy as np

from kradar_plugin.evaluation.inputs.box_convention import info_location_to_radar, lidar_boxes_to_evaluator
from kradar_plugin.evaluation.inputs.result_io import gather_results
from kradar_plugin.evaluation.protocols import FAKE_2D_BOX
from kradar_plugin.evaluation.frames import frame_of, offsets_of
from kradar_plugin.evaluation.validation import check_columns

#: optional GT fields: (name, trailing shape, default when an info lacks it)
GT_OPTIONAL = (('truncated', (), 0.0), ('occluded', (), 0.0), ('alpha', (), 0.0), ('bbox', (4,), FAKE_2D_BOX))
_EMPTY_NAMES = np.zeros(0, dtype='<U1')


class Gathered(object):
    """One side's per-object arrays concatenated over ``n_frames`` frames: ``arrays[key]`` and ``offsets``
    (F + 1,), frame ``f`` being rows ``offsets[f]:offsets[f+1]``."""

    def __init__(self, arrays, offsets):
        self.arrays = arrays
        self.offsets = offsets
        self.n_frames = len(offsets) - 1


def _rows(value, trailing, where, key, n):
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise ValueError("{}['annos'][{!r}]: cannot be read as numbers ({})".format(where, key, exc))
    try:
        arr = arr.reshape((-1,) + trailing)
    except ValueError:
        arr = None
    if arr is None or arr.shape[0] != n:
        raise ValueError("{}['annos']: {!r} has shape {} but 'name' has {} entries".format(
            where, key, np.shape(value), n))
    return arr


def check_frame_counts(n_infos, n_results):
    """A ValueError unless there is one result per info."""
    if n_infos != n_results:
        raise ValueError('{} results for {} infos: results must align with the info list frame by frame '
                         '(different counts mean duplicated or truncated distributed results)'.format(
                             n_results, n_infos))


def info_list(infos):
    """The list of info dicts of an info pickle's content: a list, or a dict with 'infos' (mmdet3d < 1.1)
    or 'data_list' (mmdet3d >= 1.1)."""
    if isinstance(infos, dict):
        for key in ('infos', 'data_list'):
            if key in infos:
                if not isinstance(infos[key], (list, tuple)):
                    raise ValueError("infos[{!r}]: expected a list of info dicts, got {}".format(
                        key, type(infos[key]).__name__))
                return list(infos[key])
        raise ValueError("infos: a dict without 'infos'/'data_list'; expected a list of info dicts")
    if not isinstance(infos, (list, tuple)):
        raise ValueError('infos: expected a list of info dicts, got {}'.format(type(infos).__name__))
    return list(infos)


def gather_infos(infos, indices=None):
    """GT :class:`Gathered` of EchoFusion info dicts (``name``, ``location``, ``dimensions``, ``rotation_y``
    and the optional ``GT_OPTIONAL`` fields, defaults filled in), unfiltered, in the info layout.
    ``indices``: the frame numbers errors name (default 0, 1, ...)."""
    indices = range(len(infos)) if indices is None else indices
    parts = dict((k, []) for k in ('name', 'location', 'dimensions', 'rotation_y') + tuple(
        k for k, _, _ in GT_OPTIONAL))
    counts = np.zeros(len(infos), dtype=np.int64)
    for f, (info, index) in enumerate(zip(infos, indices)):
        where = 'infos[{}]'.format(index)
        if not isinstance(info, dict) or 'annos' not in info:
            raise ValueError("{}: expected an EchoFusion info dict with an 'annos' entry, got {}".format(
                where, sorted(info) if isinstance(info, dict) else type(info).__name__))
        annos = info['annos']
        if not isinstance(annos, dict):
            raise ValueError("{}['annos']: expected a dict of per-object arrays, got {}".format(
                where, type(annos).__name__))
        names = annos.get('name', [])
        if isinstance(names, (str, bytes)):
            names = [names]
        try:
            names = np.asarray(names)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError("{}['annos']['name']: cannot be read as class names ({})".format(where, exc))
        if names.dtype.kind not in 'USO' and names.size:
            raise ValueError("{}['annos']['name']: expected class names, got {} values".format(where, names.dtype))
        if names.ndim > 1:
            raise ValueError("{}['annos']['name']: expected one class name per object, got shape {}".format(
                where, names.shape))
        n = names.shape[0] if names.ndim else 0
        location = _rows(annos.get('location', np.zeros((0, 3))), (3,), where, 'location', n)
        for key in ('rotation_y', 'dimensions'):
            if key not in annos:
                raise ValueError("{}['annos']: missing field {!r}".format(where, key))
        counts[f] = n
        parts['name'].append(names.reshape(-1) if n else _EMPTY_NAMES)
        parts['location'].append(location)
        parts['dimensions'].append(_rows(annos['dimensions'], (3,), where, 'dimensions', n))
        parts['rotation_y'].append(_rows(annos['rotation_y'], (), where, 'rotation_y', n))
        for key, trailing, _ in GT_OPTIONAL:
            if key in annos:
                parts[key].append((f, _rows(annos[key], trailing, where, key, n)))
    offsets = offsets_of(counts)
    total = int(offsets[-1])
    widths = {'location': (3,), 'dimensions': (3,), 'rotation_y': ()}
    arrays = {}
    for key in ('name', 'location', 'dimensions', 'rotation_y'):
        if parts[key]:
            arrays[key] = np.concatenate(parts[key])
        else:
            arrays[key] = _EMPTY_NAMES if key == 'name' else np.zeros((0,) + widths[key])
    try:
        arrays['name'] = arrays['name'].astype(str)
    except UnicodeDecodeError:      # bytes names that are not ASCII
        arrays['name'] = np.array([n.decode('utf-8', 'replace') if isinstance(n, bytes) else str(n)
                                   for n in arrays['name'].tolist()], dtype=str)
    for key, trailing, default in GT_OPTIONAL:     # the default where an info lacks the field
        given = parts[key]
        if len(given) == len(infos):
            arrays[key] = np.concatenate([arr for _, arr in given]) if given else np.zeros((0,) + trailing)
            continue
        column = np.empty((total,) + trailing)
        column[...] = default
        for f, arr in given:
            column[offsets[f]:offsets[f + 1]] = arr
        arrays[key] = column
    indices = list(indices)
    for key in ('location', 'dimensions', 'rotation_y'):     # always read (optional ones: when read)
        arr = arrays[key].reshape(total, -1) if total else np.zeros((0, 1))
        bad = ~np.isfinite(arr).all(axis=1)
        problem = 'is not finite'
        if key == 'dimensions' and not bad.any():
            bad, problem = (arr < 0).any(axis=1), 'has a negative size'
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            f = frame_of(offsets, row)
            raise ValueError("{}['annos'][{!r}][{}] = {} {}".format(
                'infos[{}]'.format(indices[f]), key, row - offsets[f], arrays[key][row].tolist(), problem))
    return Gathered(arrays, offsets)


def gather_result_frames(results, class_names, indices=None):
    """Detection :class:`Gathered` (``boxes`` (M, 7), ``scores``, ``labels``) of per-frame model results,
    checked by ``result_io.gather_results``."""
    boxes, scores, labels, offsets = gather_results(results, class_names, indices)
    return Gathered({'boxes': boxes, 'scores': scores, 'labels': labels}, offsets)


def in_roi(centers, pcd_limit_range, azimuth_range):
    """Rows whose (x, y, z) lies strictly inside ``pcd_limit_range`` and, unless ``azimuth_range`` is None,
    whose azimuth lies strictly inside it (degrees)."""
    lo = np.asarray(pcd_limit_range[:3], dtype=np.float64)
    hi = np.asarray(pcd_limit_range[3:], dtype=np.float64)
    keep = ((centers > lo) & (centers < hi)).all(axis=1)
    if azimuth_range is not None:
        az = np.arctan2(centers[:, 1], centers[:, 0])
        keep &= (az > azimuth_range[0] * np.pi / 180.) & (az < azimuth_range[1] * np.pi / 180.)
    return keep


def _counts(frames, keep):
    """Kept rows per frame of a :class:`Gathered`."""
    owner = np.repeat(np.arange(frames.n_frames, dtype=np.int64), np.diff(frames.offsets))
    return np.bincount(owner[keep], minlength=frames.n_frames).astype(np.int64)


def gt_columns(gt, class_names, pcd_limit_range, azimuth_range):
    """(evaluator GT columns, kept objects per frame) of gathered infos: the objects of ``class_names``
    inside the region, location (y, z, x), dimensions (l, h, w)."""
    a = gt.arrays
    keep = in_roi(info_location_to_radar(a['location']), pcd_limit_range, azimuth_range)
    keep &= np.isin(a['name'], list(class_names))
    location = a['location'][keep]
    location[:, [0, 1]] *= -1
    data = {'name': a['name'][keep], 'location': location, 'dimensions': a['dimensions'][keep][:, [2, 1, 0]],
            'rotation_y': a['rotation_y'][keep]}
    for key, _, _ in GT_OPTIONAL:
        data[key] = a[key][keep]
    return data, _counts(gt, keep)


def dt_columns(dt, class_names, pcd_limit_range, azimuth_range, dt_z_is_bottom, box_convention):
    """(evaluator detection columns, kept detections per frame) of gathered results: the boxes inside the
    region (``azimuth_range`` None: range only), read under ``box_convention`` (a name)."""
    a = dt.arrays
    keep = in_roi(a['boxes'][:, :3], pcd_limit_range, azimuth_range)
    boxes = a['boxes'][keep]
    if dt_z_is_bottom:
        boxes[:, 2] += boxes[:, 5] / 2.0
    geometry = lidar_boxes_to_evaluator(boxes, box_convention)
    n = len(boxes)
    names = np.asarray([str(c) for c in class_names])[a['labels'][keep]] if n else _EMPTY_NAMES
    data = {'name': names, 'truncated': np.zeros(n), 'occluded': np.zeros(n), 'alpha': geometry['alpha'],
            'bbox': np.tile(np.asarray(FAKE_2D_BOX, dtype=np.float64), (n, 1)),
            'dimensions': geometry['dimensions'], 'location': geometry['location'],
            'rotation_y': geometry['rotation_y'], 'score': a['scores'][keep]}
    return data, _counts(dt, keep)


class Converted(object):
    """GT and detection :class:`Gathered` columns (infos and results read once, the per-frame part);
    :meth:`sides` converts them for one protocol, so several protocols share the reading.
    ``box_convention`` must be a name (resolved)."""

    def __init__(self, gt, dt, class_names, box_convention, dt_z_is_bottom=False):
        check_frame_counts(gt.n_frames, dt.n_frames)
        self.gt = gt
        self.dt = dt
        self.class_names = tuple(class_names)
        self.box_convention = box_convention
        self.dt_z_is_bottom = dt_z_is_bottom

    def columns(self, proto):
        """(gt columns, gt offsets, detection columns, detection offsets) of every frame under the
        :class:`Protocol` ``proto``: its region and its detection azimuth filter (its frame rule is the
        evaluation engine's: frame weights)."""
        gt, gt_counts = gt_columns(self.gt, self.class_names, proto.pcd_limit_range, proto.azimuth_range)
        dt, dt_counts = dt_columns(self.dt, self.class_names, proto.pcd_limit_range,
                                   proto.azimuth_range if proto.dt_azimuth_filter else None, self.dt_z_is_bottom,
                                   self.box_convention)
        return gt, offsets_of(gt_counts), dt, offsets_of(dt_counts)

    def sides(self, proto, fields=None):
        """(gt, detections) as checked ``validation.CheckedSide`` for the evaluator. ``fields``: the optional
        fields the evaluation reads (``engine.fields_read``; None: all), the only ones checked and kept."""
        gt, gt_off, dt, dt_off = self.columns(proto)
        return check_columns('gt_annos', gt, gt_off, fields), check_columns('dt_annos', dt, dt_off, fields)
