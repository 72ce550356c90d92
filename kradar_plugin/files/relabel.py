"""Saved predictions against another label version of the same frames: the infos of a run (EchoFusion's, or
``kradar-create-data``'s) with their ``annos`` replaced by the ``tree``'s labels, joined by
``annos['label_file']`` ('<seq>,<rdr>_<ldr64>.txt', the same file name in every version), and the conditions
read again from ``description.txt``. The infos keep their order, so the results still pair with them."""
import warnings

from .errors import KRadarFileError, quote
from .infos import echofusion_annos
from .labels import read_label
from .quirks import Quirks
from .radar_frame import kept
from .splits import MAX_SEQUENCE_DIGITS, is_sequence, plain_label_name


def relabel_infos(infos, tree, z_offset=0.7, only_r=False, what='--infos', quirks=None):
    """New info dicts (shallow copies) with ``tree.label_version``'s annos, conditions and ``label_version``;
    a frame that cannot be joined is a :class:`KRadarFileError` naming it. The quirks of the label files met
    (:mod:`.quirks`) are counted in ``quirks`` when given, else said in one warning (a line per quirk)."""
    out = []
    found = Quirks() if quirks is None else quirks
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
        if label.quirks:
            found.add_file(seq + '/' + name, label.quirks)
        calib, desc = tree.calibration(seq), tree.description(seq)
        new = dict(info)
        new['annos'] = echofusion_annos(kept(label.objects, only_r), calib.x, calib.y, label_file, z_offset,
                                        avail=label.version in ('v1.1', 'v2.1'))
        new.update(road_type=desc.road_type, capture_time=desc.capture_time, climate=desc.climate,
                   label_version=label.version, sequence=seq)
        out.append(new)
    if quirks is None and found:
        warnings.warn(LabelQuirks('what the {} labels of {} held, read as K-Radar\'s loader reads them:\n  {}'.format(
            tree.label_version, what, '\n  '.join(found.lines()))))
    return out


class LabelQuirks(UserWarning):
    """The summary of the quirks of K-Radar's label files met while relabelling (one warning, a line each)."""


def label_file_parts(label_file, index, what='--infos'):
    """(sequence, file name) of an infos' ``annos['label_file']`` ('<seq>,<rdr>_<ldr64>.txt'), by the rule of
    a split entry (:func:`~.splits.plain_label_name`): sequence digits, a plain file name ending in ``.txt``.
    Anything else is a :class:`KRadarFileError` naming frame ``index`` and the value (quoted short), before a
    file is opened: a label outside the label folder is never read."""
    problem = None
    if not isinstance(label_file, str) or label_file.count(',') != 1:
        problem = "expected '<seq>,<rdr>_<ldr64>.txt'"
    else:
        seq, name = (p.strip() for p in label_file.split(','))
        if not seq.isdigit():
            problem = 'names no sequence'
        elif not is_sequence(seq):
            problem = 'a sequence number of more than {} digits'.format(MAX_SEQUENCE_DIGITS)
        elif not plain_label_name(name):
            problem = "expected a plain file name '<rdr>_<ldr64>.txt' (no folder, no '..')"
    if problem:
        raise KRadarFileError(what, "frame {} cannot be joined to K-Radar's labels: annos['label_file'] = {}: "
                                    "{}".format(index, quote(label_file), problem))
    return str(int(seq)), name

