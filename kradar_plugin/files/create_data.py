"""``kradar-create-data``: EchoFusion-layout info pickles from K-Radar's own files, any label version.

    kradar-create-data --root-path ROOT [ROOT ...] --out-dir OUT --split-dir DIR [--label-version v1.0]
                       [--labels-dir DIR] [--extra-tag kradar] [--sequences 1-20] [--strict]
    kradar-create-data --audit --root-path ROOT [ROOT ...] [--split-dir DIR] [--labels-dir DIR] [--json]

Writes ``OUT/<tag>_infos_<split>.pkl`` for each split list ``<split>.txt`` in ``--split-dir`` (K-Radar's
``resources/split`` or EchoFusion's ``ImageSets``), in a pickle every numpy >= 1.17 reads. Reads labels,
calibration and descriptions only; never writes into the dataset. Ends with one summary of the real files'
quirks it met (:mod:`.quirks`); ``--strict`` makes each an error. ``--audit`` writes nothing and prints what
the tree holds (:mod:`.audit`).
"""
import argparse
import gc
import os
import sys
import time

from ..version import __version__
from .calibration import Z_OFFSET
from .errors import KRadarFileError
from .infos import split_infos
from .labels import VERSIONS, normalize_version, read_label
from .quirks import WARN, Quirks
from .safe_write import write_bytes
from .split_jobs import SplitJob, run_jobs
from .splits import count_overlaps, parse_sequences, read_split, split_files
from .tree import KRadarTree

PROG = 'kradar-create-data'


def _arg_type(parse):
    """``parse`` for argparse: its ValueError is the option's error message."""
    def convert(text):
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc))
    return convert


def _parser():
    p = argparse.ArgumentParser(
        prog=PROG,
        description="EchoFusion-layout info pickles (<tag>_infos_<split>.pkl) from K-Radar's own label, "
                    "calibration, description and split files, for label versions v1.0 (the dataset's "
                    "info_label) and the revised v1.1, v2.0 and v2.1. No sensor file is read or written.")
    p.add_argument('--version', action='version', version='%(prog)s ' + __version__)
    p.add_argument('--root-path', nargs='+', required=True, metavar='ROOT',
                   help='dataset root(s) holding the sequence folders 1..58 (several disks: several roots)')
    p.add_argument('--out-dir', help='where the info pickles go (required unless --audit)')
    p.add_argument('--split-dir',
                   help="folder of split lists <split>.txt, lines '<seq>,<rdr>_<ldr64>.txt' (K-Radar's "
                        "resources/split or EchoFusion's ImageSets; '#' lines are comments); required unless --audit")
    p.add_argument('--label-version', type=_arg_type(normalize_version), metavar='|'.join(VERSIONS),
                   help='K-Radar label version (default v1.0; the v2.0 benchmark is defined on v2.0; --audit: '
                        'every version found unless given)')
    p.add_argument('--labels-dir', help="the revised labels (v1.1, v2.0, v2.1): K-Radar's "
                                        "tools/revise_label/kradar_revised_label_v*_*.zip unzipped, its folder "
                                        "or inner folder")
    p.add_argument('--extra-tag', default='kradar', help='file name prefix (default kradar)')
    p.add_argument('--sequences', type=_arg_type(parse_sequences), help='only these sequences, e.g. 1-20 (EchoFusion)')
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
    p.add_argument('--strict', action='store_true',
                   help="make each quirk of the real files an error (visibility values outside R/L/L1, classes "
                        "outside the benchmark's five, yaw outside +-180 degrees, glued headers, split-list "
                        "comments, duplicates and overlaps, ...) instead of reading it as K-Radar does")
    p.add_argument('--audit', action='store_true',
                   help='write nothing: print what the tree holds (per label version: frames, classes, '
                        'visibility, yaw range, quirks; missing descriptions and calibrations; split lists '
                        'against the label files); exit 0 when nothing blocks conversion, 2 otherwise')
    p.add_argument('--json', action='store_true', help='--audit: print the report as JSON')
    p.add_argument('--no-progress', action='store_true', help='no progress bar')
    return p


def convert_split(tree, split_path, sequences=None, z_offset=Z_OFFSET, only_r=False, extra_paths=None,
                  check_sensors=False, progress=None, entries=None, quirks=None):
    """The info list of one split file (entries in file order; ``entries`` its :class:`~.splits.SplitEntry`
    list when already read); the quirks met are counted in ``quirks`` (a :class:`~.quirks.Quirks`). The
    garbage collector pauses meanwhile: the many small containers built would trigger collections that find
    nothing (half the time otherwise)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        if entries is None:
            entries = read_split(split_path, sequences, quirks)
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
            if label.quirks and quirks is not None:
                quirks.add_file(entry.sequence + '/' + entry.label, label.quirks)
            if progress is not None and (index + 1) % 500 == 0:
                progress.update(500)
        infos = split_infos(tree, entries, labels, z_offset, only_r, extra_paths, check_sensors)
        if progress is not None:
            progress.update(len(entries) % 500)
            progress.close()
        return infos
    finally:
        if enabled:
            gc.enable()


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
    parser = _parser()
    args = parser.parse_args(argv)
    if args.audit:
        from .audit import main_audit
        return main_audit(args, _bar)
    for flag, value in (('--out-dir', args.out_dir), ('--split-dir', args.split_dir)):
        if not value:
            parser.error('{} is required (or --audit to look at the tree without converting)'.format(flag))
    start = time.time()
    quirks = Quirks()
    version = args.label_version or 'v1.0'
    try:
        extra = _extra_paths(args.radar_path)
        tree = KRadarTree(args.root_path, version, args.labels_dir)
        splits = split_files(args.split_dir)
        lists = dict((name, read_split(path, args.sequences, quirks)) for name, path in splits.items())
        count_overlaps(lists, quirks)
        check_out_dir(args.out_dir)

        def convert(path):
            return lambda entries, found, step: convert_split(
                tree, path, z_offset=args.z_offset, only_r=args.only_r, extra_paths=extra,
                check_sensors=args.check_sensors, progress=step, entries=entries, quirks=found)
        jobs = [SplitJob(name, lists[name], convert(splits[name])) for name in sorted(splits)]
        outputs = []
        for name, data, frames, objects, found in run_jobs(jobs, None if args.no_progress else _bar()):
            quirks.merge(found)
            out = os.path.join(args.out_dir, '{}_infos_{}.pkl'.format(args.extra_tag, name))
            outputs.append((out, data, frames, objects))
        report_quirks(quirks, args.strict)
        for out, data, _, _ in outputs:
            write_bytes(out, data)      # through a fresh temporary file (never a planted link), then a rename
    except (KRadarFileError, ValueError, OSError) as exc:
        sys.stderr.write('{}: error: {}\n'.format(PROG, exc))
        return 2
    for out, _, frames, objects in outputs:
        sys.stdout.write('{}: {} frames, {} objects (labels {})\n'.format(out, frames, objects, tree.label_version))
    sys.stdout.write('done in {:.2f} s\n'.format(time.time() - start))
    return 0


def report_quirks(quirks, strict=False, stream=None, prog=PROG):
    """The summary of the quirks met, one line each (``note:``, or ``warning:`` for split duplicates and
    overlaps); with ``strict`` the first becomes a ValueError (the error line), after the summary."""
    stream = stream or sys.stderr
    for kind in quirks.ordered():
        level = 'warning' if kind in WARN else 'note'
        stream.write('{}: {}: {}\n'.format(prog, level, quirks.line(kind)))
    if strict and quirks:
        kinds = quirks.ordered()
        raise ValueError('--strict: {}{}'.format(quirks.line(kinds[0]), ' (and {} other kind(s) of quirk, listed '
                                                 'above)'.format(len(kinds) - 1) if len(kinds) > 1 else ''))


def check_out_dir(path):
    """Create ``path``; a file or anything else in its place is a KRadarFileError, not a raw errno."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise KRadarFileError(path, '--out-dir exists and is not a folder: give a folder (it is created when '
                                    'missing)')
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise KRadarFileError(path, 'cannot create the --out-dir folder ({})'.format(exc.strerror or exc))


def _bar():
    from ..progress import TextBar
    try:
        from tqdm import tqdm
    except ImportError:
        return TextBar()
    from ..progress import TqdmBar
    return TqdmBar(tqdm)


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
