"""``kradar-create-data``: EchoFusion-layout info pickles from K-Radar's own files, any label version.

    kradar-create-data --root-path ROOT [ROOT ...] --out-dir OUT --split-dir DIR [--label-version v1.0]
                       [--labels-dir DIR] [--extra-tag kradar] [--sequences 1-20]

Writes ``OUT/<tag>_infos_<split>.pkl`` for each split list ``<split>.txt`` in ``--split-dir`` (K-Radar's
``resources/split`` or EchoFusion's ``ImageSets``). Reads labels, calibration and descriptions only; never
writes into the dataset.
"""
import argparse
import gc
import os
import pickle
import sys
import time

from ..version import __version__
from .calibration import Z_OFFSET
from .errors import KRadarFileError
from .infos import split_infos
from .labels import VERSIONS, normalize_version, read_label
from .splits import parse_sequences, read_split, split_files
from .tree import KRadarTree


def _parser():
    p = argparse.ArgumentParser(
        prog='kradar-create-data',
        description="EchoFusion-layout info pickles (<tag>_infos_<split>.pkl) from K-Radar's own label, "
                    "calibration, description and split files, for label versions v1.0 (the dataset's "
                    "info_label) and the revised v1.1, v2.0 and v2.1. No sensor file is read or written.")
    p.add_argument('--version', action='version', version='%(prog)s ' + __version__)
    p.add_argument('--root-path', nargs='+', required=True, metavar='ROOT',
                   help='dataset root(s) holding the sequence folders 1..58 (several disks: several roots)')
    p.add_argument('--out-dir', required=True, help='where the info pickles go')
    p.add_argument('--split-dir', required=True,
                   help="folder of split lists <split>.txt, lines '<seq>,<rdr>_<ldr64>.txt' (K-Radar's "
                        "resources/split or EchoFusion's ImageSets)")
    p.add_argument('--label-version', default='v1.0', type=normalize_version, metavar='|'.join(VERSIONS),
                   help='K-Radar label version (default v1.0; the v2.0 benchmark is defined on v2.0)')
    p.add_argument('--labels-dir', help="the revised labels (v1.1, v2.0, v2.1): K-Radar's "
                                        "tools/revise_label/kradar_revised_label_v*_*.zip unzipped, its folder "
                                        "or inner folder")
    p.add_argument('--extra-tag', default='kradar', help='file name prefix (default kradar)')
    p.add_argument('--sequences', type=parse_sequences, help='only these sequences, e.g. 1-20 (EchoFusion)')
    p.add_argument('--only-r', action='store_true',
                   help="K-Radar's onlyR: keep radar-visible objects (avail R), drop L and L1")
    p.add_argument('--z-offset', type=float, default=Z_OFFSET,
                   help='z added to label centres with the calibration (default 0.7 m, K-Radar\'s and '
                        'EchoFusion\'s)')
    p.add_argument('--radar-path', action='append', default=[], metavar='KEY=PATTERN',
                   help="add info['radar'][KEY] = PATTERN per frame, e.g. bev_path=radar_bev/bev_{rdr}.npy "
                        "({rdr}, {ldr64}, {camf}, {ldr128}, {camr}: the frame's indices)")
    p.add_argument('--check-sensors', action='store_true',
                   help='check that each frame\'s front image, radar cube and --radar-path files exist '
                        '(stat only)')
    p.add_argument('--no-progress', action='store_true', help='no progress bar')
    return p


def convert_split(tree, split_path, sequences=None, z_offset=Z_OFFSET, only_r=False, extra_paths=None,
                  check_sensors=False, progress=None):
    """The info list of one split file (entries in file order). The garbage collector pauses meanwhile: the
    many small containers built would trigger collections that find nothing (half the time otherwise)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _convert_split(tree, split_path, sequences, z_offset, only_r, extra_paths, check_sensors, progress)
    finally:
        if enabled:
            gc.enable()


def _convert_split(tree, split_path, sequences, z_offset, only_r, extra_paths, check_sensors, progress):
    entries = read_split(split_path, sequences)
    labels = []
    if progress is not None:
        progress.start(len(entries), os.path.basename(split_path))
    for index, entry in enumerate(entries):
        if entry.sequence not in tree.sequences:
            raise KRadarFileError(split_path, 'sequence {} is in no dataset root ({}); --sequences converts a '
                                  'subset'.format(entry.sequence, ', '.join(tree.roots)),
                                  line=entry.number, field='entry', value=entry.line)
        path = tree.label_path(entry.sequence, entry.label)
        try:
            label = read_label(path, tree.label_version)
        except KRadarFileError as exc:
            if exc.problem.startswith('no such'):
                raise KRadarFileError(path, 'label file missing: {} lists it (line {})'.format(
                    split_path, entry.number))
            raise
        labels.append(label)
        if progress is not None and (index + 1) % 500 == 0:
            progress.update(500)
    infos = split_infos(tree, entries, labels, z_offset, only_r, extra_paths, check_sensors)
    skipped = [(label.path, line, why) for label in labels for line, why in label.skipped]
    if skipped:
        path, line, why = skipped[0]
        sys.stderr.write('kradar-create-data: warning: {}: skipped {} object line(s) that K-Radar\'s loader skips '
                         'too (\'* split err\'); first: {}:{}: {}\n'.format(
                             os.path.basename(split_path), len(skipped), path, line, why))
    if progress is not None:
        progress.update(len(entries) % 500)
        progress.close()
    return infos


def _extra_paths(items):
    out = {}
    for item in items:
        key, sep, pattern = item.partition('=')
        if not sep or not key or not pattern:
            raise ValueError('--radar-path {!r}: expected KEY=PATTERN'.format(item))
        try:
            pattern.format(rdr='0', ldr64='0', camf='0', ldr128='0', camr='0')
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError('--radar-path {!r}: unknown placeholder {}'.format(item, exc))
        out[key] = pattern
    return out


def main(argv=None):
    args = _parser().parse_args(argv)
    from ..evaluation.progress import TextBar
    start = time.time()
    try:
        extra = _extra_paths(args.radar_path)
        tree = KRadarTree(args.root_path, args.label_version, args.labels_dir)
        splits = split_files(args.split_dir)
        os.makedirs(args.out_dir, exist_ok=True)
        written = []
        for name, path in sorted(splits.items()):
            bar = None if args.no_progress else _bar(TextBar)
            infos = convert_split(tree, path, args.sequences, args.z_offset, args.only_r, extra,
                                  args.check_sensors, bar)
            out = os.path.join(args.out_dir, '{}_infos_{}.pkl'.format(args.extra_tag, name))
            tmp = out + '.tmp'
            with open(tmp, 'wb') as f:
                pickle.dump(infos, f, protocol=4)   # Python 3.4+: numpy arrays as raw bytes (2 encodes them)
            os.replace(tmp, out)
            written.append((out, len(infos), sum(len(i['annos']['rotation_y']) for i in infos)))
    except (KRadarFileError, ValueError, OSError) as exc:
        sys.stderr.write('kradar-create-data: error: {}\n'.format(exc))
        return 2
    for out, frames, objects in written:
        sys.stdout.write('{}: {} frames, {} objects (labels {})\n'.format(out, frames, objects, tree.label_version))
    sys.stdout.write('done in {:.2f} s\n'.format(time.time() - start))
    return 0


def _bar(text_bar):
    try:
        from tqdm import tqdm
    except ImportError:
        return text_bar()
    from ..evaluation.progress import TqdmBar
    return TqdmBar(tqdm)


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
