"""``kradar-eval``: evaluate saved K-Radar annotations or model results offline (thin CLI).

The console script enters through ``kradar_cli`` (outside the package), which turns off the framework
registration that ``import kradar_plugin`` does for configs: no torch, mmcv or mmdet is imported here,
and numba only when an evaluation runs.
"""
import argparse
import sys

from ..version import __version__
from .evaluator import SideSet
from .presets import PRESET_NAMES
from .protocols import BENCHMARKS, PROTOCOL_NAMES


def _parser():
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
    from .load_options import add_arguments
    add_arguments(p)
    p.add_argument('--trust-pickle', action='store_true',
                   help='read pickles with the plain unpickler (by default only numpy arrays/scalars, builtin '
                        'containers, strings and numbers are admitted: loading a pickle can run code)')
    return p


def _grouped_mode(args):
    return bool(args.conditions or args.table or args.bootstrap or args.compare_dt_annos or args.compare_results
                or args.score_threshold is not None or args.group or args.groups)


def _evaluations(args):
    """(Evaluations, grouped results {protocol: groups} or None) as the arguments ask."""
    from .kradar_eval import fields_read, warm_up
    from .loading import read_checked
    from ..progress import make_bar
    from .subset import in_region
    overrides = {}
    if args.distance_edges is not None:
        overrides['distance_edges'] = tuple(args.distance_edges)
    if args.benchmark:
        overrides['pcd_limit_range'] = BENCHMARKS[args.benchmark]['pcd_limit_range']
    args.azimuth_range = None
    if args.preset:
        _apply_preset(args, overrides)
    if args.classes is None:
        args.classes = list(BENCHMARKS[args.benchmark]['classes']) if args.benchmark else ['Sedan']
    if args.protocol is None:   # K-Radar's own folders: K-Radar's evaluator; EchoFusion's pickles: EchoFusion's
        args.protocol = 'kradar' if args.kitti_dir else 'legacy'
    names = list(PROTOCOL_NAMES) if args.protocol == 'all' else [args.protocol]
    annos_mode = args.gt_annos or args.dt_annos
    infos_mode = args.infos or args.results
    if sum(bool(m) for m in (annos_mode, infos_mode, args.kitti_dir)) != 1 or (
            annos_mode and not (args.gt_annos and args.dt_annos)) or (infos_mode and not (args.infos and args.results)):
        raise ValueError('give either --gt-annos and --dt-annos, or --infos and --results, or --kitti-dir')
    if args.excluded_samples and not infos_mode:
        raise ValueError('--excluded-samples goes with --infos/--results')
    if (args.kradar_root or args.label_version or args.labels_dir or args.only_r) and not infos_mode:
        raise ValueError('--kradar-root/--label-version/--labels-dir/--only-r go with --infos/--results')
    if (args.label_version or args.labels_dir or args.only_r) and not args.kradar_root:
        raise ValueError('--label-version/--labels-dir/--only-r need --kradar-root (the dataset root with the '
                         'sequence folders)')
    if args.kitti_dir and (args.compare_dt_annos or args.compare_results):
        raise ValueError('--compare-dt-annos/--compare-results go with --gt-annos or --infos, not --kitti-dir')
    if args.compare_results and not infos_mode or args.compare_dt_annos and not annos_mode:
        raise ValueError('--compare-dt-annos goes with --gt-annos/--dt-annos, --compare-results with '
                         '--infos/--results')
    if args.bootstrap < 0:
        raise ValueError('--bootstrap must be >= 0, got {}'.format(args.bootstrap))
    if args.kitti_dir:
        return _evaluate_kitti(args, names, overrides, make_bar)
    if not annos_mode:
        return _evaluate_results(args, names, overrides, make_bar)
    _warn_label_version(args, [None])
    fields = fields_read(names, args.iou_mode, args.eval_types, **overrides)
    from .load_options import limits
    gt, dt = read_checked(args.gt_annos, args.dt_annos, fields, meanwhile=lambda: warm_up(
        names, args.iou_mode, args.eval_types, **overrides), trusted=args.trust_pickle, limits=limits(args),
        export=args.export)
    other = None
    if args.compare_dt_annos:
        other = read_checked(args.gt_annos, args.compare_dt_annos, fields, trusted=args.trust_pickle,
                             limits=limits(args), export=args.export, what=('--gt-annos', '--compare-dt-annos'))[1]
    if args.benchmark or args.preset:
        region = overrides['pcd_limit_range']
        gt, dt = in_region(gt, region, args.azimuth_range), in_region(dt, region)
        other = in_region(other, region) if other is not None else None
    conditions = None
    if args.conditions:
        from . import conditions as cond
        conditions = cond.load(args.conditions, len(gt), trusted=args.trust_pickle, limits=limits(args))
    return _evaluate_sides(args, names, overrides, [SideSet(gt, dt, other, conditions)], make_bar,
                           frame_rule=True)


def _apply_preset(args, overrides):
    """Fill the options a preset fixes (protocol, classes, region, azimuth, thresholds) where the command line
    gave none; the evaluator reports the options that differ from the preset's."""
    from .presets import apply
    chosen, _ = apply(args.preset, protocol=args.protocol, classes=tuple(args.classes) if args.classes else None,
                      pcd_limit_range=overrides.get('pcd_limit_range'),
                      score_thresholds=tuple(args.score_threshold) if args.score_threshold else None)
    args.protocol = chosen['protocol']
    args.classes = list(chosen['classes'])
    args.score_threshold = list(chosen['score_thresholds']) if chosen['score_thresholds'] else None
    overrides['pcd_limit_range'] = tuple(chosen['pcd_limit_range'])
    args.azimuth_range = tuple(chosen['azimuth_range'])


def _warn_label_version(args, versions):
    """One ``kradar-eval: warning:`` line when the benchmark or preset needs other labels
    (``label_versions``, ``presets.label_warning``)."""
    from .label_versions import benchmark_label_warning
    message = benchmark_label_warning(args.benchmark, versions)
    if message is None and args.preset:
        from .presets import label_warning
        message = label_warning(args.preset, versions)
    if message:
        sys.stderr.write('kradar-eval: warning: {}\n'.format(message))


def _evaluate_kitti(args, names, overrides, make_bar):
    """--kitti-dir: K-Radar's prediction folder read into columns (frames paired by file name), conditions
    from its desc/ files, then evaluated as annotation pickles are (frames without GT dropped)."""
    from kradar_plugin.files.kitti_folders import read_folder
    from .kradar_eval import fields_read
    from .subset import in_region
    from .validation import check_columns
    folder = read_folder(args.kitti_dir, progress=lambda n: make_bar(n, not args.no_progress))
    fields = fields_read(names, args.iou_mode, args.eval_types, **overrides)
    gt = check_columns('gt_annos', folder.gt[0], folder.gt[1], fields)
    dt = check_columns('dt_annos', folder.dt[0], folder.dt[1], fields)
    if args.benchmark or args.preset:
        gt = in_region(gt, overrides['pcd_limit_range'], args.azimuth_range)
        dt = in_region(dt, overrides['pcd_limit_range'])
    _warn_label_version(args, [None])
    conditions = folder.conditions
    if args.conditions:
        from . import conditions as cond
        conditions = cond.load(args.conditions, gt.n_frames, trusted=args.trust_pickle)
    elif args.bootstrap:
        sys.stderr.write('kradar-eval: note: K-Radar\'s prediction folders name no sequence: --bootstrap resamples '
                         'frames, not sequences (give --conditions with a sequence per frame for sequence '
                         'intervals)\n')
    return _evaluate_sides(args, names, overrides, [SideSet(gt, dt, None, conditions)], make_bar,
                           frame_rule=True)


def _evaluator(args, names, overrides):
    """The :class:`KRadarEvaluator` the arguments describe (the dataset evaluations use the same one)."""
    from .cli_printed import user_groups
    from .evaluator import KRadarEvaluator
    settings = dict((k, v) for k, v in overrides.items() if k != 'pcd_limit_range')   # --benchmark's / preset's
    annotations = not (args.infos or args.results)
    azimuth = args.azimuth_range
    if annotations and azimuth is None:
        azimuth = (-180.0, 180.0)   # annotation files: no azimuth filter is applied here (the fingerprint says so)
    evaluator = KRadarEvaluator(
        args.classes, names, args.eval_types, args.iou_mode, benchmark=args.benchmark,
        pcd_limit_range=None if args.benchmark else overrides.get('pcd_limit_range'), azi_limit_range=azimuth,
        score_threshold=args.score_threshold, conditions=None, bootstrap=args.bootstrap, seed=args.seed,
        box_convention=args.box_convention, dt_z_is_bottom=args.dt_z_is_bottom, grouped=_grouped_mode(args) or None,
        kradar_root=args.kradar_root, label_version=args.label_version, labels_dir=args.labels_dir,
        only_r=args.only_r, preset=args.preset, groups=user_groups(args), groups_only=args.groups_only, **settings)
    if annotations:
        evaluator.region_filtered = bool(args.benchmark or args.preset)
    args.evaluator = evaluator
    return evaluator


def _evaluate_sides(args, names, overrides, inputs, make_bar, frame_rule, evaluator=None):
    """Evaluations and grouped results of ``inputs`` (see ``KRadarEvaluator.evaluate_sides``)."""
    evaluator = evaluator or _evaluator(args, names, overrides)
    return evaluator.evaluate_sides(inputs, frame_rule, progress=lambda n: make_bar(n, not args.no_progress))


def _evaluate_results(args, names, overrides, make_bar):
    """--infos / --results: both files gathered into columns once (in worker processes for large files,
    while numba warms up), then evaluated by the evaluator (``KRadarEvaluator.evaluate_gathered``)."""
    from kradar_plugin.evaluation.inputs.kradar_columns import gather_infos, gather_result_frames, info_list
    from .kradar_eval import warm_up
    from .loading import read_pair
    from . import conditions as cond
    classes = tuple(args.classes)
    evaluator = _evaluator(args, names, overrides)
    if args.excluded_samples:
        from .command_line import read_excluded
        evaluator.excluded = read_excluded(args.excluded_samples)
    protos = evaluator.protocols
    grouped = _grouped_mode(args)

    gone = set(f['index'] for f in evaluator.excluded)

    def gather(infos):
        from .label_versions import label_versions
        infos = info_list(infos)
        infos = evaluator.relabelled([x for i, x in enumerate(infos) if i not in gone] if gone else infos, '--infos')
        rows = cond.from_infos(infos) if grouped and not args.conditions else None
        return (gather_infos(infos), rows), label_versions(infos)

    from .inputs.npz_layout import result_frames
    from .load_options import exporting, limits

    def results_of(option, path):
        return exporting(lambda results: result_frames(results, classes, gather_result_frames), args.export,
                         option, path, 'results')

    ((gt, rows), versions), dt = read_pair((('--infos', args.infos, gather),
                                            ('--results', args.results, results_of('--results', args.results))),
                                           meanwhile=lambda: warm_up(protos, args.iou_mode, args.eval_types),
                                           trusted=args.trust_pickle, limits=limits(args))
    _warn_label_version(args, versions)
    evaluator.label_versions = versions
    if args.conditions:
        rows = cond.load(args.conditions, gt.n_frames, trusted=args.trust_pickle, limits=limits(args))
    if gt.n_frames != dt.n_frames:
        raise ValueError('--infos {!r} / --results {!r}: {} results for {} infos: results must align with the info '
                         'list frame by frame'.format(args.infos, args.results, dt.n_frames, gt.n_frames))
    other = None
    if args.compare_results:
        other = read_pair((('--compare-results', args.compare_results,
                            results_of('--compare-results', args.compare_results)),), trusted=args.trust_pickle,
                          limits=limits(args))[0]
        if other.n_frames != gt.n_frames:
            raise ValueError('--compare-results {!r}: {} results for {} infos'.format(
                args.compare_results, other.n_frames, gt.n_frames))
    return evaluator.evaluate_gathered(gt, dt, rows, other, progress=lambda n: make_bar(n, not args.no_progress))


def main(argv=None):
    args = _parser().parse_args(argv)
    from . import report
    from .cli_output import OneLineWarnings, print_tables, write_json
    if args.list_presets:
        from .presets import list_text
        sys.stdout.write(list_text())
        return 0
    try:
        if args.plot_dir:
            try:
                import matplotlib  # noqa: F401  (checked before the evaluation runs)
            except ImportError:
                raise ValueError('--plot-dir needs matplotlib (pip install matplotlib)')
        if args.groups_only and not (args.group or args.groups):
            raise ValueError('--groups-only needs --group or --groups')
        if args.kradar_results:
            from .cli_printed import run
            return run(args)
        if args.table == 'kradar' and args.protocol == 'all':
            raise ValueError("--table kradar prints one protocol's results (K-Radar's format names none): choose "
                             "--protocol")
        with OneLineWarnings() as shown:
            evaluations, grouped = _evaluations(args)
    except ValueError as exc:
        sys.stderr.write('kradar-eval: error: {}\n'.format(' '.join(str(exc).split())))
        return 2
    except (MemoryError, RecursionError, Exception) as exc:  # noqa: BLE001 - one line, never a traceback
        sys.stderr.write('kradar-eval: error: {}: {} (unexpected; please report it with the command line)\n'.format(
            type(exc).__name__, ' '.join(str(exc).split())[:500]))
        return 2
    print_tables(args, evaluations, grouped)
    note = shown.numba_note(max(ev.n_frames for ev in evaluations))
    if note:
        sys.stderr.write('kradar-eval: note: {}\n'.format(note))
    for note in args.evaluator.group_notes:
        sys.stderr.write('kradar-eval: note: {}\n'.format(note))
    for ev in evaluations:
        note = report.z_convention_note(ev)
        if note:
            sys.stderr.write('kradar-eval: note: {}\n'.format(note))
    try:    # each file through a fresh temporary file renamed over its name (files.safe_write)
        if args.json:
            write_json(args, evaluations, grouped)
        if args.plot_dir:
            curves, overviews = [], []
            for ev in evaluations:
                curves.extend(report.save_pr_curves(ev, args.plot_dir))
                overviews.extend(report.save_overviews(ev, args.plot_dir,
                                                       grouped.get(ev.protocol.name) if grouped is not None else None))
            sys.stdout.write('{} precision-recall plots and {} overview figures written to {}\n'.format(
                len(curves), len(overviews), args.plot_dir))
    except (ValueError, OSError) as exc:
        sys.stderr.write('kradar-eval: error: {}\n'.format(' '.join(str(exc).split())))
        return 2
    return 0


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
