"""``kradar-eval --kradar-results FILE [FILE ...]``: K-Radar's printed results (``complete_results.txt``, one
or many: epochs x thresholds, labelled by their paths) as our paper tables (Markdown, LaTeX, CSV) and JSON;
the CLI's part of ``printed_results`` (``--table kradar``, our results in K-Radar's format, is
:mod:`cli_output`'s).

With ``--infos`` (and optionally ``--kradar-root`` for other labels, ``--preset``/``--benchmark`` for the
region, ``--group``/``--groups`` for extra condition names) the GT counts per condition come from an
evaluation of those infos, so K-Radar's 0.0 for a class without GT prints N/A; without them such values are
marked ``(no GT?)``.
"""
import sys

from . import printed_results as printed


def check_options(args):
    """A ValueError for options that do not go with ``--kradar-results``."""
    other = [flag for flag, value in (('--gt-annos', args.gt_annos), ('--dt-annos', args.dt_annos),
                                      ('--results', args.results), ('--kitti-dir', args.kitti_dir),
                                      ('--compare-dt-annos', args.compare_dt_annos),
                                      ('--compare-results', args.compare_results), ('--plot-dir', args.plot_dir),
                                      ('--bootstrap', args.bootstrap), ('--conditions', args.conditions),
                                      ('--score-threshold', args.score_threshold is not None)) if value]
    if other:
        raise ValueError('--kradar-results reads K-Radar\'s printed numbers: {} cannot apply to them (--infos '
                         'gives GT counts)'.format(', '.join(other)))
    if args.table == 'kradar':
        raise ValueError('--kradar-results is already in K-Radar\'s format: choose --table markdown, latex or csv')
    if (args.kradar_root or args.label_version) and not args.infos:
        raise ValueError('--kradar-root/--label-version with --kradar-results need --infos (the evaluated frames)')


def _gt_counts(args, classes):
    """``{group: {class: n}}`` of ``--infos`` (relabelled with ``--kradar-root``; the options' region, classes
    and groups), from an evaluation of the infos with no detection; None without ``--infos``."""
    if not args.infos:
        return None
    import numpy as np
    from .evaluator import KRadarEvaluator
    protocol = args.protocol if args.protocol not in (None, 'all') else (None if args.preset else 'kradar')
    evaluator = KRadarEvaluator(
        classes, protocol, ('bev', '3d'), benchmark=args.benchmark, preset=args.preset, grouped=True,
        kradar_root=args.kradar_root, label_version=args.label_version, labels_dir=args.labels_dir,
        only_r=args.only_r, groups=user_groups(args), groups_only=args.groups_only)
    infos = KRadarEvaluator.load_infos(args.infos, '--infos', trusted=args.trust_pickle)
    empty = {'boxes_3d': np.zeros((0, 7)), 'scores_3d': np.zeros(0), 'labels_3d': np.zeros(0, dtype=np.int64)}
    evaluator.process(infos, [empty] * len(infos))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')    # "no detections": none are meant; only the GT is counted here
        evaluator.evaluate()
    if not evaluator.groups:
        raise ValueError('--infos {}: no conditions (road_type, capture_time, climate) to count GT by'.format(
            args.infos))
    args.evaluator = evaluator
    return printed.gt_counts(evaluator.groups[evaluator.protocols[0].name])


def user_groups(args):
    """The ``groups`` value of ``--group`` and ``--groups`` (None when neither is given)."""
    given = list(args.group or []) + ([args.groups] if args.groups else [])
    return given or None


def run(args):
    """Read, print the tables (default Markdown) and write ``--json``; returns the exit status."""
    from kradar_plugin.files.kradar_results import read_results
    check_options(args)
    files = [read_results(path) for path in args.kradar_results]
    for f in files:
        for note in f.notes:
            sys.stderr.write('kradar-eval: note: {}\n'.format(note))
    classes = []
    for f in files:
        classes += [c for c in (printed.class_of(b.cls) for b in f.blocks) if c not in classes]
    counts = _gt_counts(args, classes)
    fmt = args.table or 'markdown'
    runs, marked = [], False
    for f in files:
        for conf in f.thresholds():
            groups, cls, ious, unverified = printed.to_groups([b for b in f.blocks if b.conf_text == conf], counts)
            kept = 'every detection' if conf == 'None' else 'detections with score > {}'.format(conf)
            caption = "K-Radar's printed results {}, Conf thr {} ({}); K-Radar's file does not record its " \
                      "evaluator, region or labels".format(f.path, conf, kept)
            from .tables import render
            sys.stdout.write('=== {}, Conf thr {} ===\n'.format(f.path, conf))
            sys.stdout.write(render(groups, cls, ious, fmt, caption=caption, unverified=unverified))
            marked = marked or bool(unverified)
            runs.append({'file': f.path, 'conf_thr': conf, 'score_threshold': _float(conf),
                         'conditions': [printed.condition_of(g) for g in groups], 'classes': cls,
                         'groups': groups, 'unverified_zero': sorted([g, k] for g, k in unverified)})
    if marked:
        sys.stdout.write(printed.NO_GT_NOTE + '\n')
    if args.json:
        from .cli_output import write_json_file
        write_json_file(args.json, {'source': 'kradar-results', 'runs': runs,
                                    'gt_counts_from': args.infos or None})
    return 0


def _float(text):
    return None if text == 'None' else float(text)
