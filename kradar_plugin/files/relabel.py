"""Saved predictions against another label version of the same frames: the infos of a run (EchoFusion's, or
``kradar-create-data``'s) with their ``annos`` replaced by the ``tree``'s labels, joined by
``annos['label_file']`` ('<seq>,<rdr>_<ldr64>.txt', the same file name in every version), and the conditions
read again from ``description.txt``. The infos keep their order, so the results still pair with them."""
from .errors import KRadarFileError
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
        if not isinstance(label_file, str) or label_file.count(',') != 1:
            raise KRadarFileError(what, "frame {} cannot be joined to K-Radar's labels: annos['label_file'] is {!r}, "
                                  "expected '<seq>,<rdr>_<ldr64>.txt'".format(index, label_file))
        seq, name = (p.strip() for p in label_file.split(','))
        if not seq.isdigit():
            raise KRadarFileError(what, "frame {}: annos['label_file'] = {!r} names no sequence".format(index, label_file))
        seq = str(int(seq))
        if seq not in tree.sequences:
            raise KRadarFileError(what, "frame {} ({!r}): sequence {} is in no dataset root ({})".format(
                index, label_file, seq, ', '.join(tree.roots)))
        path = tree.label_path(seq, name)
        try:
            label = read_label(path, tree.label_version)
        except KRadarFileError as exc:
            if exc.problem.startswith('no such'):
                raise KRadarFileError(path, 'no {} label for frame {} ({!r}) of {}'.format(
                    tree.label_version, index, label_file, what))
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
