"""``kradar-eval``'s command line: its options, and the reading limits (:class:`safe_load.Limits`) they give."""
import argparse

from ..loading import safe_load
from ..version import __version__
from .presets import PRESET_NAMES
from .protocols import BENCHMARKS, PROTOCOL_NAMES


def build_parser():
    """The ``kradar-eval`` argument parser."""
    p = argparse.ArgumentParser(
        prog='kradar-eval',
        description='K-Radar evaluation with the legacy (EchoFusion), kradar (K-Radar eval.py), 4drmr (4DR-MR '
                    'eval.py), revised (K-Radar eval_revised.py) or fixed protocol, or a paper\'s whole setting '
                    '(--preset; --list-presets), on evaluator-layout annotation pickles, on an info pickle plus '
                    'saved model results (optionally rescored against another K-Radar label version: '
                    '--kradar-root), or on K-Radar\'s own prediction folders (--kitti-dir). One protocol prints '
                    'its own table (EchoFusion\'s text for legacy); --protocol all prints one compact table with '
                    'all side by side; --conditions/--table/--bootstrap/--compare-* give K-Radar\'s per-condition '
                    'paper tables; several --score-threshold values give one table each. Every output ends with '
                    'a "K-Radar scoring:" line that states how it was scored.')
    p.add_argument('--version', action='version', version='%(prog)s ' + __version__)
    p.add_argument('--gt-annos', help='pickle: list of per-frame GT dicts (EchoFusion format_anno layout)')
    p.add_argument('--dt-annos', help='pickle: list of per-frame detection dicts (same layout + score)')
    p.add_argument('--infos', help='EchoFusion info pickle (e.g. kradar_infos_val.pkl)')
    p.add_argument('--results', help='pickle of per-frame model results (as saved by KRadarDataset.evaluate)')
    p.add_argument('--kitti-dir', help="K-Radar's own prediction folder: a <conf> folder of its pipeline's "
                                       "test_kitti/<epoch>/ output (val.txt + pred/gt/desc, or all/ + "
                                       "preds/gts/desc); conditions from desc/")
    p.add_argument('--classes', nargs='+', default=None,
                   help="classes to evaluate (default: Sedan; the benchmark's with --benchmark)")
    p.add_argument('--protocol', default=None, choices=list(PROTOCOL_NAMES) + ['all'],
                   help="legacy (EchoFusion's kradar_eval; the default, kradar with --kitti-dir), kradar (K-Radar "
                        "eval.py: 11 points, z_center 1.0), 4drmr (4DR-MR eval.py: 11 points, z_center 0.5), "
                        "revised (K-Radar "
                        "eval_revised.py: 41 points, z_center 0.5), fixed (corrected), or all of them")
    p.add_argument('--preset', choices=list(PRESET_NAMES),
                   help='a published setting: protocol, region, classes, label version and confidence thresholds '
                        'as the paper\'s config has them (options given beside it override it, and the output '
                        'says so); see --list-presets')
    p.add_argument('--list-presets', action='store_true', help='print what each preset fixes and its source')
    p.add_argument('--eval-types', nargs='+', default=['bbox', 'bev', '3d'], choices=['bbox', 'bev', '3d'])
    p.add_argument('--iou-mode', default='all', choices=['all', 'easy', 'mod', 'hard'],
                   help="IoU thresholds as EchoFusion's iou_mode: all (0.3 0.5 0.7), easy (0.3), mod (0.5), "
                        "hard (0.7)")
    p.add_argument('--distance-edges', nargs='+', type=float, default=None,
                   help='distance bin edges in metres for distance-binned protocols (default 0 30 50 72)')
    p.add_argument('--dt-z-is-bottom', action='store_true',
                   help='--results mode: the boxes\' z is the true bottom (add dz/2); EchoFusion models '
                        'output the label centre there')
    p.add_argument('--box-convention', choices=['mmdet3d<1.0', 'mmdet3d>=1.0'], default=None,
                   help="--results mode: the mmdet3d box convention the model was trained under "
                        "(default: the installed mmdet3d's; 'mmdet3d<1.0' without mmdet3d)")
    p.add_argument('--full', action='store_true',
                   help="print each protocol's own table and the compact table")
    p.add_argument('--json', help='write {"protocol": ..., "metrics": {...}} (AP in percent) to this file')
    p.add_argument('--excluded-samples', metavar='FILE',
                   help='--infos mode: a JSON list of dataset indices (or the runner\'s <results>.excluded.json '
                        'of samples skipped by --skip-bad-samples) left out of --infos: --results holds the '
                        'rest; the fingerprint and --json say "N samples excluded"')
    p.add_argument('--plot-dir', help='save a precision-recall PNG per class, metric and IoU, and an overview '
                                      'PNG per class and protocol, here')
    p.add_argument('--no-progress', action='store_true',
                   help='no progress bar (shown on stderr for sets over 5,000 frames)')
    g = p.add_argument_group('K-Radar paper tables')
    g.add_argument('--benchmark', choices=sorted(BENCHMARKS),
                   help="K-Radar's benchmark: v1 (ROI x 0-72, y +-6.4, z -2-6 m; Sedan) or v2 (x 0-72, y +-16, "
                        "z -2-7.6 m; Sedan and Bus or Truck); sets the region and, unless --classes is given, "
                        "the classes")
    g.add_argument('--conditions', help="per-frame conditions: a JSON list of {road_type, capture_time, climate"
                                        "[, sequence]} in the frames' order, or an info pickle (with --infos "
                                        "they come from the infos)")
    g.add_argument('--score-threshold', type=float, nargs='+', metavar='T',
                   help='keep detections with score > T (K-Radar: 0.3, 0.5, 0.7; 0.0 keeps every positive score); '
                        'several values: one table per threshold, JSON keyed by threshold, matching done once')
    g.add_argument('--table', choices=['markdown', 'latex', 'csv', 'kradar'],
                   help="print K-Radar's paper table (Total and the seven weathers, then --group columns; AP3D "
                        "and APBEV; #GT); kradar: K-Radar's own printed format (complete_results.txt), alone "
                        "on stdout, for scripts built around it")
    g.add_argument('--group', action='append', metavar='NAME=SEQS',
                   help='a group of sequences as an extra column, e.g. clean=1-20,22 (repeatable): GT counts, '
                        'bootstrap intervals over its sequences and the comparison as the weathers have')
    g.add_argument('--groups', metavar='FILE', help='groups from a JSON or YAML file: name -> "1-20,22", a list of '
                                                    'numbers and ranges, or a split list file')
    g.add_argument('--groups-only', action='store_true', help='the groups instead of the weather columns')
    g.add_argument('--kradar-results', nargs='+', metavar='FILE',
                   help="K-Radar's printed results (complete_results.txt; several: epochs x thresholds, labelled "
                        "by path) as these tables and --json; --infos gives GT counts (N/A for a class without GT)")
    g.add_argument('--bootstrap', type=int, default=0, metavar='N',
                   help='N bootstrap replicates resampling whole sequences: adds ci95 per group')
    g.add_argument('--seed', type=int, default=0, help='bootstrap seed (same seed, same intervals)')
    g.add_argument('--compare-dt-annos', help='a second model (B) on the same frames: adds delta = B - A')
    g.add_argument('--compare-results', help='--infos mode: a second model\'s results (B): adds delta = B - A')
    k = p.add_argument_group("K-Radar's own labels (--infos/--results: score a run against another label version)")
    k.add_argument('--kradar-root', nargs='+', metavar='ROOT',
                   help='dataset root(s) holding the sequence folders: GT and conditions are read from K-Radar\'s '
                        'label files of --label-version for the frames of --infos (joined by annos[\'label_file\'])')
    k.add_argument('--label-version', help='v1.0 (info_label), v1.1, v2.0 or v2.1 (the revised labels; the v2.0 '
                                           'benchmark is defined on v2.0)')
    k.add_argument('--labels-dir', help="the revised labels: K-Radar's tools/revise_label/kradar_revised_label_"
                                        "v*_*.zip unzipped (its folder or inner folder)")
    k.add_argument('--only-r', action='store_true', help="K-Radar's onlyR: radar-visible GT (avail R) only")
    g = p.add_argument_group('reading files (see docs/evaluation.md, "Files from others")')
    g.add_argument('--export', metavar='DIR',
                   help='also write each annotation/result input read as DIR/<name>.npz (arrays only, read with '
                        'np.load(allow_pickle=False)): the way to share predictions')
    defaults = safe_load.Limits.from_settings()   # the flags of the reading limits (safe_load.Limits)
    for field, flag in sorted(safe_load.FLAGS.items(), key=lambda kv: kv[1]):
        kind = int if field in ('max_array_elements', 'max_elements') else float
        parser_help = {'max_file_mb': 'refuse input files larger than this (MB)',
                       'max_array_elements': 'elements one array of an input file may hold',
                       'max_elements': 'elements an input file may hold in all (shared references counted)',
                       'memory_mb': 'memory (MiB of address space) the process reading a file may add',
                       'seconds': 'seconds the process reading a file may take'}[field]
        g.add_argument(flag, type=kind, default=None, dest='load_' + field,
                       help='{} (default {}, {})'.format(parser_help, getattr(defaults, field),
                                                        safe_load.LIMIT_SETTINGS[field]))
    p.add_argument('--trust-pickle', action='store_true',
                   help='read pickles with the plain unpickler (by default only numpy arrays/scalars, builtin '
                        'containers, strings and numbers are admitted: loading a pickle can run code)')
    return p


def load_limits(args):
    """The :class:`safe_load.Limits` the arguments (or the settings) give."""
    return safe_load.Limits.from_settings(**dict(
        (field, getattr(args, 'load_' + field, None)) for field in safe_load.FLAGS))


def user_groups(args):
    """The ``groups`` value of ``--group`` and ``--groups`` (None when neither is given)."""
    given = list(args.group or []) + ([args.groups] if args.groups else [])
    return given or None
