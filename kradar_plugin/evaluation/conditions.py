"""K-Radar's driving conditions per frame, and the groups a paper table reports.

K-Radar describes each sequence by ``road_type,capture_time,climate`` (its ``description.txt``);
EchoFusion copies the three fields into every info (keeping the trailing newline of the last one). Groups
are K-Radar's: ``total`` (every frame, pooled: not an average of the others), ``weather/<climate>``,
``road/<road_type>`` and ``time/<capture_time>``; names lower case and stripped. A condition with no frame
has no group.
"""
import numpy as np

from ..loading.safe_numpy import short_repr

#: K-Radar's condition values in the order its papers print them (unknown values follow, sorted)
WEATHER = ('normal', 'overcast', 'fog', 'rain', 'sleet', 'lightsnow', 'heavysnow')
ROADS = ('urban', 'highway', 'countryside', 'alleyway', 'parkinglots', 'shoulder', 'mountain', 'university')
TIMES = ('day', 'night')
#: (condition key, group prefix, known values in order)
KINDS = (('climate', 'weather', WEATHER), ('road_type', 'road', ROADS), ('capture_time', 'time', TIMES))
#: the paper table's columns after Total, and how they are printed
WEATHER_TITLES = ('Normal', 'Overcast', 'Fog', 'Rain', 'Sleet', 'LightSnow', 'HeavySnow')


def normalize(value):
    """K-Radar's spelling of a condition value: text, stripped, lower case ('' for None)."""
    if value is None:
        return ''
    if isinstance(value, bytes):
        value = value.decode('utf-8', 'replace')
    return str(value).strip().lower()


def sequence_of(info):
    """The sequence of an EchoFusion info: the ``seq`` of its ``label_file`` "seq,label" (in ``annos`` or at
    the top), else its ``sequence``; '' when neither says."""
    annos = info.get('annos') if isinstance(info.get('annos'), dict) else {}
    label = annos.get('label_file', info.get('label_file'))
    if label is not None and not isinstance(label, (str, bytes)):
        label = label[0] if len(label) else None   # an array of per-object copies
    if label is not None:
        return normalize(label).split(',')[0].replace('\\', '/').split('/')[0]
    return normalize(info.get('sequence'))


def from_infos(infos):
    """One ``{'road_type', 'capture_time', 'climate', 'sequence'}`` per info; a ValueError names the first
    info that lacks a condition field."""
    out = []
    for i, info in enumerate(infos):
        if not isinstance(info, dict):
            raise ValueError('infos[{}]: expected an info dict, got {}'.format(i, type(info).__name__))
        missing = [k for k, _, _ in KINDS if k not in info]
        if missing:
            raise ValueError('infos[{}] has no {} (EchoFusion infos carry road_type, capture_time and climate '
                             'from the sequence\'s description.txt)'.format(i, ', '.join(missing)))
        for k, _, _ in KINDS:
            if not isinstance(info[k], (str, bytes)) and info[k] is not None:
                raise ValueError('infos[{}][{!r}] = {}: expected text'.format(i, k, short_repr(info[k], 80)))
        row = dict((k, normalize(info[k])) for k, _, _ in KINDS)
        row['sequence'] = sequence_of(info)
        out.append(row)
    return out


def rows_of(content):
    """Condition rows of a conditions file's content: a JSON list of objects, an info pickle's infos, or an
    exported infos .npz."""
    from .inputs.npz_layout import info_columns, kind_of
    if kind_of(content) == 'infos':
        rows = info_columns(content)[1]
        if rows is None:
            raise ValueError('the .npz holds no conditions (road_type, capture_time, climate, sequence)')
        return rows
    if isinstance(content, list) and all(isinstance(r, dict) and 'annos' not in r for r in content):
        for i, row in enumerate(content):
            missing = [k for k, _, _ in KINDS if k not in row]
            bad = [k for k, _, _ in KINDS + (('sequence', None, None),)
                   if k in row and row[k] is not None and not isinstance(row[k], str)]
            if missing or bad:
                raise ValueError('frame {} must be an object with road_type, capture_time and climate as text, '
                                 'got {}'.format(i, short_repr(row, 80)))
        return [dict(((k, normalize(r[k])) for k, _, _ in KINDS), sequence=normalize(r.get('sequence')))
                for r in content]
    if isinstance(content, dict) and 'infos' in content:
        content = content['infos']
    if not isinstance(content, (list, tuple)):
        raise ValueError('expected a JSON list of per-frame objects or an info pickle holding a list of '
                         'per-frame dicts, got {}'.format(type(content).__name__))
    return from_infos(list(content))


def load(path, n_frames, what='--conditions', trusted=False, limits=None):
    """Conditions from a JSON list (one object per frame, in the frames' order), an info pickle or an
    exported infos .npz, read under ``safe_load``'s policy."""
    from ..loading import safe_load
    rows = safe_load.read_one(path, what, rows_of, trusted, limits)
    if len(rows) != n_frames:
        raise ValueError('{} {!r} describes {} frames but {} frames are evaluated'.format(
            what, path, len(rows), n_frames))
    return rows


def groups(conditions, frames=None, user_groups=None, groups_only=False):
    """``{group name: frame indices (int64 array)}`` in table order (insertion order): ``total`` then
    weather, road and time groups (conditions None: ``total`` only), then ``group/<name>`` of each user
    group (``groups.UserGroup``; kept even when empty); ``groups_only``: no condition groups. ``frames``: the
    frame indices evaluated (default all). Values are compared as :func:`normalize` spells them."""
    n = len(conditions) if conditions is not None else 0
    frames = np.arange(n, dtype=np.int64) if frames is None else np.asarray(frames, dtype=np.int64)
    out = {'total': frames}
    if conditions is None:
        return out
    for key, prefix, known in () if groups_only else KINDS:
        raw = [conditions[i].get(key) for i in frames.tolist()]
        spelled = dict((value, normalize(value)) for value in set(raw))
        values = np.array([spelled[value] for value in raw] or [''], dtype=object)[:len(raw)]
        present = set(spelled.values())   # known values in their order, then the others sorted
        for value in [v for v in known if v in present] + sorted(v for v in present if v not in known and v):
            out['{}/{}'.format(prefix, value)] = frames[values == value]
    if user_groups:
        from .groups import frames_of
        out.update(frames_of(user_groups, conditions, frames))
    return out
