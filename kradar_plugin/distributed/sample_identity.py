"""Which sample a dataset index is, in words a user can act on: the fields of its info that identify it.

For K-Radar infos (``annos['label_file']`` = ``'<seq>,<rdr>_<ldr64>.txt'``): the label file, the sequence,
the frame's sensor indices (radar, os2-64 LiDAR) and the paths of the files it reads. For other datasets:
the info's id-like and path-like fields (``sample_idx``, ``token``, ``lidar_path``, ``img_filename``, ...).
Duck-typed (``dataset.data_infos`` of mmcv 1.x datasets, ``get_data_info(index)`` of both generations):
no framework import.
"""
import os.path as osp
import re

_ID_KEY = re.compile(r'(^|_)(idx|id|ids|token|index|frame|seq|sequence|timestamp|scene|label_file)$', re.I)
_PATH_KEY = re.compile(r'(path|file|filename|files|paths)$', re.I)
MAX_FIELDS = 12
MAX_TEXT = 240


def _short(value):
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 3] + '...'


def _scalar(value):
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _walk(info, prefix='', depth=0):
    """(dotted key, value) of the scalar fields of nested dicts (three levels)."""
    if not isinstance(info, dict) or depth > 2:
        return
    for key, value in info.items():
        name = '{}{}'.format(prefix, key)
        if isinstance(value, dict):
            for item in _walk(value, name + '.', depth + 1):
                yield item
        elif isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value[:8]):
            if _PATH_KEY.search(str(key)):
                yield name, ', '.join(value[:8])
        elif _scalar(value):
            yield name, value


def generic_fields(info):
    """[(key, text)] of the id-like and path-like fields of an info dict."""
    out = []
    for key, value in _walk(info):
        last = key.rsplit('.', 1)[-1]
        if _ID_KEY.search(last) or (_PATH_KEY.search(last) and isinstance(value, str) and value):
            out.append((key, _short(value)))
    return out[:MAX_FIELDS]


def kradar_fields(info, data_root=None):
    """[(key, text)] naming a K-Radar frame, or [] when ``info`` is not one."""
    if not isinstance(info, dict):
        return []
    annos = info.get('annos')
    label_file = annos.get('label_file') if isinstance(annos, dict) else info.get('label_file')
    if not isinstance(label_file, str) or label_file.count(',') != 1:
        return []
    seq, name = (part.strip() for part in label_file.split(','))
    out = [('label_file', label_file), ('sequence', seq)]
    stem = name[:-4] if name.endswith('.txt') else name
    parts = stem.split('_')
    if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]):
        out.append(('sensor indices', 'radar {}, os2-64 {}'.format(parts[0], parts[1])))
    for group in ('radar', 'lidar', 'image', 'point_cloud'):
        fields = info.get(group)
        if isinstance(fields, dict):
            for key in sorted(fields):
                value = fields[key]
                if isinstance(value, str) and (_PATH_KEY.search(key) or '/' in value):
                    path = osp.join(data_root, seq, value) if data_root else value
                    out.append(('{}.{}'.format(group, key), _short(path)))
    return out[:MAX_FIELDS]


def _info_of(dataset, index):
    infos = getattr(dataset, 'data_infos', None)
    if isinstance(infos, (list, tuple)) and 0 <= index < len(infos):
        return infos[index]
    getter = getattr(dataset, 'get_data_info', None)
    try:
        return getter(index) if callable(getter) else None
    except Exception:
        return None


def _read_paths(dataset, index):
    """[(key, path)] of the files the dataset's ``get_data_info`` names for this index (the paths read)."""
    getter = getattr(dataset, 'get_data_info', None)
    if not callable(getter):
        return []
    try:
        data = getter(index)
    except Exception:
        return []
    return [(k, v) for k, v in generic_fields(data) if _PATH_KEY.search(k.rsplit('.', 1)[-1])]


def identify(dataset, index):
    """[(key, text)] naming sample ``index`` of ``dataset``; never raises."""
    try:
        base = getattr(dataset, 'dataset', None)
        if base is not None and not hasattr(dataset, 'data_infos') and hasattr(base, 'data_infos'):
            dataset = base   # a wrapper (ours, a subset) around the real dataset
        info = _info_of(dataset, index)
        fields = kradar_fields(info, getattr(dataset, 'data_root', None))
        if not fields:
            fields = generic_fields(info)
        seen = set(v for _, v in fields)
        for key, path in _read_paths(dataset, index):
            if path not in seen and len(fields) < MAX_FIELDS + 4:
                fields.append((key, path))
                seen.add(path)
        return fields
    except Exception:   # naming the sample must never hide the failure itself
        return []


def describe(index, fields):
    """``dataset index 70 (label_file 1,00070_00070.txt; sequence 1; ...)``."""
    text = 'dataset index {}'.format(index)
    if fields:
        text += ' (' + '; '.join('{} {}'.format(k, v) for k, v in fields) + ')'
    return text
