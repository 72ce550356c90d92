"""Saved predictions against another label version of the same frames: the infos of a run (EchoFusion's, or
``kradar-create-data``'s) with their ``annos`` replaced by the ``tree``'s labels, joined by
``annos['label_file']`` ('<seq>,<rdr>_<ldr64>.txt', the same file name in every version), and the conditions
read again from ``description.txt``. The infos keep their order, so the results still pair with them."""
import os
import re

from .errors import KRadarFileError, quote
from .infos import echofusion_annos
from .labels import read_label
from .radar_frame import kept


def relabel_infos(infos, tree, z_offset=0.7, only_r=False, what='--infos'):
    """New info dicts (shallow copies) with ``tree.label_version``'s annos, conditions and ``label_version``;
    a frame that cannot be joined is a :class:`KRadarFileError` naming it."""
    out, skipped = [], []
    for index, info in enumerate(infos):
        annos = info.get('annos') if isinstance(info, dict) else None
        label_file = annos.get('label_file') if isinstance(annos, dict) else None
        seq, name = label_file_parts(label_file, index, what)
        if seq not in tree.sequences:
            raise KRadarFileError(what, "frame {} ({}): sequence {} is in no dataset root ({})".format(
                index, quote(label_file), seq, ', '.join(tree.roots)))
        path = tree.label_path(seq, name)
        try:
            label = read_label(path, tree.label_version)
        except KRadarFileError as exc:
            if exc.problem.startswith('no such'):
                raise KRadarFileError(path, 'no {} label for frame {} ({}) of {}'.format(
                    tree.label_version, index, quote(label_file), what))
            raise
        calib = tree.calibration(seq)
        desc = tree.description(seq)
        skipped += [(path, line, why) for line, why in label.skipped]
        new = dict(info)
        new['annos'] = echofusion_annos(kept(label.objects, only_r), calib.x, calib.y, label_file, z_offset,
                                        avail=label.version in ('v1.1', 'v2.1'))
        new.update(road_type=desc.road_type, capture_time=desc.capture_time, climate=desc.climate,
                   label_version=label.version, sequence=seq)
        out.append(new)
    if skipped:
        import warnings
        warnings.warn('{} object line(s) skipped in the {} labels, as K-Radar\'s loader skips them (\'* split '
                      'err\'); first: {}:{}: {}'.format(len(skipped), tree.label_version, *skipped[0]))
    return out


#: digits of a sequence number (K-Radar's are 1..58)
SEQUENCE_DIGITS = 5
#: characters of a label file name (K-Radar's are '<rdr>_<ldr64>.txt', 15)
NAME_CHARS = 255
_DIGITS = re.compile(r'^[0-9]+$')


def label_file_parts(label_file, index, what='--infos'):
    """(sequence, file name) of an infos' ``annos['label_file']`` ('<seq>,<rdr>_<ldr64>.txt'), by the rule of
    a split entry: sequence digits, a plain file name ending in ``.txt`` (no ``/``, ``\\``, ``..``, NUL, not
    absolute). Anything else is a :class:`KRadarFileError` naming frame ``index`` and the value (quoted short),
    before a file is opened: a label outside the label folder is never read."""
    problem = None
    if not isinstance(label_file, str) or label_file.count(',') != 1:
        problem = "expected '<seq>,<rdr>_<ldr64>.txt'"
    else:
        seq, name = (p.strip() for p in label_file.split(','))
        if not _DIGITS.match(seq):
            problem = 'names no sequence'
        elif len(seq) > SEQUENCE_DIGITS:
            problem = 'a sequence number of more than {} digits'.format(SEQUENCE_DIGITS)
        elif not _plain_label_name(name):
            problem = "expected a plain file name '<rdr>_<ldr64>.txt' (no folder, no '..')"
    if problem:
        raise KRadarFileError(what, "frame {} cannot be joined to K-Radar's labels: annos['label_file'] = {}: "
                                    "{}".format(index, quote(label_file), problem))
    return str(int(seq)), name


def _plain_label_name(name):
    return (name.endswith('.txt') and 4 < len(name) <= NAME_CHARS and '..' not in name and
            not any(c in name for c in '/\\\x00') and not os.path.isabs(name) and
            os.path.basename(name) == name)
