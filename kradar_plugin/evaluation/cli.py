"""``kradar-eval``: evaluate saved K-Radar annotations or model results offline (thin CLI).

The console script enters through ``kradar_cli`` (outside the package), which turns off the framework
registration that ``import kradar_plugin`` does for configs: no torch, mmcv or mmdet is imported here,
and numba only when an evaluation runs. The options are :mod:`cli_args`'s. The input files are read under
:mod:`kradar_plugin.loading`'s policy, each in a child process that turns it into a few flat arrays (checked
annotations, or gathered infos / results) while this process warms numba up; errors read the same either
way: a ValueError naming the file, and the frame, field and value.
"""
import sys

from ..loading import safe_load
from .cli_args import build_parser, load_limits, user_groups
from .protocols import BENCHMARKS, PROTOCOL_NAMES
from .validation import check_side


def _grouped_mode(args):
    return bool(args.conditions or args.table or args.bootstrap or args.compare_dt_annos or args.compare_results
                or args.score_threshold is not None or args.group or args.groups)


def _evaluations(args):
    """(Evaluations, grouped results {protocol: groups} or None) as the arguments ask."""
    from .engine import fields_read, warm_up
    from ..progress import make_bar
    from .validation import check_columns, in_region
    overrides = {}
    if args.distance_edges is not None:
        overrides['distance_edges'] = tuple(args.distance_edges)
    if args.benchmark:
        overrides['pcd_limit_range'] = BENCHMARKS[args.benchmark]['pcd_limit_range']
    args.azimuth_range = None
    if args.preset:   # the options it fixes where the command line gave none (the evaluator reports the others)
        from .presets import apply
        chosen, _ = apply(args.preset, protocol=args.protocol, classes=tuple(args.classes) if args.classes else None,
                          pcd_limit_range=overrides.get('pcd_limit_range'),
                          score_thresholds=tuple(args.score_threshold) if args.score_threshold else None)
        args.protocol = chosen['protocol']
        args.classes = list(chosen['classes'])
        args.score_threshold = list(chosen['score_thresholds']) if chosen['score_thresholds'] else None
        overrides['pcd_limit_range'] = tuple(chosen['pcd_limit_range'])
        args.azimuth_range = tuple(chosen['azimuth_range'])
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
    if infos_mode:
        return _evaluate_results(args, names, overrides, make_bar)
    fields = fields_read(names, args.iou_mode, args.eval_types, **overrides)
    other = None
    if args.kitti_dir:   # K-Radar's prediction folder read into columns (frames paired by file name), conditions
        # from its desc/ files; then evaluated as annotation pickles are. --conditions: the settings' limits.
        from kradar_plugin.files.kitti_folders import read_folder
        folder = read_folder(args.kitti_dir, progress=lambda n: make_bar(n, not args.no_progress))
        gt = check_columns('gt_annos', folder.gt[0], folder.gt[1], fields)
        dt = check_columns('dt_annos', folder.dt[0], folder.dt[1], fields)
        conditions, limits = folder.conditions, None
        _warn_label_version(args, [None])
    else:
        _warn_label_version(args, [None])
        conditions, limits = None, load_limits(args)
        gt, dt = read_checked(args.gt_annos, args.dt_annos, fields, meanwhile=lambda: warm_up(
            names, args.iou_mode, args.eval_types, **overrides), trusted=args.trust_pickle, limits=limits,
            export=args.export)
        if args.compare_dt_annos:
            other = read_checked(args.gt_annos, args.compare_dt_annos, fields, trusted=args.trust_pickle,
                                 limits=limits, export=args.export, what=('--gt-annos', '--compare-dt-annos'))[1]
    if args.benchmark or args.preset:
        region = overrides['pcd_limit_range']
        gt, dt = in_region(gt, region, args.azimuth_range), in_region(dt, region)
        other = in_region(other, region) if other is not None else None
    if args.conditions:
        from . import conditions as cond
        conditions = cond.load(args.conditions, gt.n_frames, trusted=args.trust_pickle, limits=limits)
    elif args.kitti_dir and args.bootstrap:
        sys.stderr.write('kradar-eval: note: K-Radar\'s prediction folders name no sequence: --bootstrap resamples '
                         'frames, not sequences (give --conditions with a sequence per frame for sequence '
                         'intervals)\n')
    return _evaluator(args, names, overrides).evaluate_gathered(
        gt, dt, conditions, other, progress=lambda n: make_bar(n, not args.no_progress))


def _warn_label_version(args, versions):
    """One ``kradar-eval: warning:`` line when the benchmark or preset needs other labels."""
    from .presets import label_warning
    message = label_warning(args.preset, versions, args.benchmark)
    if message:
        sys.stderr.write('kradar-eval: warning: {}\n'.format(message))


def _evaluator(args, names, overrides):
    """The :class:`KRadarEvaluator` the arguments describe (the dataset evaluations use the same one)."""
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
        only_r=args.only_r, preset=args.preset, groups=user_groups(args), groups_only=args.groups_only,
        curves=bool(args.plot_dir), **settings)
    if annotations:
        evaluator.region_filtered = bool(args.benchmark or args.preset)
    args.evaluator = evaluator
    return evaluator


def _evaluate_results(args, names, overrides, make_bar):
    """--infos / --results: both files gathered into columns once (in worker processes for large files,
    while numba warms up), then evaluated by the evaluator (``KRadarEvaluator.evaluate_gathered``)."""
    from kradar_plugin.evaluation.inputs.kradar_columns import gather_infos, gather_result_frames, info_list
    from .engine import warm_up
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
    limits = load_limits(args)

    def results_of(option, path):
        return _exporting(lambda results: result_frames(results, classes, gather_result_frames), args.export,
                          option, path, 'results')

    ((gt, rows), versions), dt = safe_load.read((('--infos', args.infos, gather),
                                                 ('--results', args.results, results_of('--results', args.results))),
                                                meanwhile=lambda: warm_up(protos, args.iou_mode, args.eval_types),
                                                trusted=args.trust_pickle, limits=limits)
    _warn_label_version(args, versions)
    evaluator.label_versions = versions
    if args.conditions:
        rows = cond.load(args.conditions, gt.n_frames, trusted=args.trust_pickle, limits=limits)
    if gt.n_frames != dt.n_frames:
        raise ValueError('--infos {!r} / --results {!r}: {} results for {} infos: results must align with the info '
                         'list frame by frame'.format(args.infos, args.results, dt.n_frames, gt.n_frames))
    other = None
    if args.compare_results:
        other = safe_load.read((('--compare-results', args.compare_results,
                                 results_of('--compare-results', args.compare_results)),), trusted=args.trust_pickle,
                               limits=limits)[0]
        if other.n_frames != gt.n_frames:
            raise ValueError('--compare-results {!r}: {} results for {} infos'.format(
                args.compare_results, other.n_frames, gt.n_frames))
    return evaluator.evaluate_gathered(gt, dt, rows, other, progress=lambda n: make_bar(n, not args.no_progress))


def read_checked(gt_path, dt_path, fields, meanwhile=None, trusted=False, limits=None, export=None,
                 what=('--gt-annos', '--dt-annos')):
    """(gt, dt) :class:`validation.CheckedSide` of two annotation files (pickles or exported .npz), checked
    for the optional ``fields`` the evaluation reads (``engine.fields_read``). ``meanwhile()`` runs in
    this process while children read; it is not called when the files are read in process. ``what``: the
    options that name the files; ``export``: a directory to write each side to as .npz (all fields)."""
    from .inputs.npz_layout import annos_side
    jobs = []
    for option, path, side in ((what[0], gt_path, 'gt_annos'), (what[1], dt_path, 'dt_annos')):
        def convert(annos, side=side):
            return annos_side(annos, side, None if export else fields, check_side)
        jobs.append((option, path, _exporting(convert, export, option, path, 'annos')))
    gt, dt = safe_load.read(jobs, meanwhile, trusted, limits)
    if gt.n_frames != dt.n_frames:
        raise ValueError('{} {!r} / {} {!r}: gt_annos has {} frames but dt_annos has {}: the lists must be aligned '
                         'frame by frame (different counts usually mean duplicated or truncated distributed '
                         'results)'.format(what[0], gt_path, what[1], dt_path, gt.n_frames, dt.n_frames))
    return gt, dt


def _exporting(convert, directory, what, path, kind):
    """``convert`` that also writes its result (a ``CheckedSide`` of annotations or ``Gathered`` results) to
    ``directory`` as an .npz (``inputs.npz_layout``); ``convert`` itself when ``directory`` is None."""
    if not directory:
        return convert

    def convert_and_write(content):
        from .inputs import npz_layout
        out = convert(content)
        if kind == 'results':
            columns = {'boxes_3d': out.arrays['boxes'], 'scores_3d': out.arrays['scores'],
                       'labels_3d': out.arrays['labels']}
        else:
            columns = dict((k, v) for k, v in out.data.items() if k != 'code')
        written = npz_layout.write(directory, path, kind, columns, out.offsets)
        sys.stdout.write('kradar-eval: {} {!r} exported to {}\n'.format(what, path, written))
        sys.stdout.flush()
        return out
    return convert_and_write


def main(argv=None):
    args = build_parser().parse_args(argv)
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
            from .cli_output import print_kradar_results
            return print_kradar_results(args)
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
    for note in ([shown.numba_note(max(ev.n_frames for ev in evaluations))] + list(args.evaluator.group_notes)
                 + [report.z_convention_note(ev) for ev in evaluations]):
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
