"""``kradar-eval``'s output: the text tables per confidence threshold (each protocol's own table, the compact
table, the paper tables, K-Radar's printed format) and the ``--json`` file; moved out of ``cli`` so that the
CLI stays a parser and a dispatcher.

``--kradar-results FILE [FILE ...]`` (:func:`print_kradar_results`) prints K-Radar's printed results
(``complete_results.txt``, one or many: epochs x thresholds, labelled by their paths) as our paper tables and
JSON (``printed_results``). With ``--infos`` (and optionally ``--kradar-root`` for other labels,
``--preset``/``--benchmark`` for the region, ``--group``/``--groups`` for extra condition names) the GT counts
per condition come from an evaluation of those infos, so K-Radar's 0.0 for a class without GT prints N/A;
without them such values are marked ``(no GT?)``.
"""
import json
import os
import sys

from . import printed_results as printed
from .cli_args import user_groups


def print_tables(args, evaluations, grouped):
    """The text tables: per confidence threshold, each protocol's own table (one protocol, or --full), the
    compact table (several), the paper tables (--table); each closed by its scoring fingerprint. ``--table
    kradar``: K-Radar's printed format alone (its fingerprint on stderr)."""
    from . import report
    evaluator = args.evaluator
    thresholds = evaluator.score_thresholds
    several = len(thresholds) > 1
    for n_t, threshold in enumerate(thresholds):
        evs = evaluator.evaluations_at[n_t] if several else evaluations
        groups_t = evaluator.groups_at[n_t] if several and evaluator.groups_at else grouped
        if args.table == 'kradar':   # stdout: K-Radar's complete_results.txt text alone (its scoring on stderr)
            proto = evaluator.protocols[0]
            sys.stdout.write(printed.kradar_text(groups_t[proto.name], evaluator.classes, proto.iou_thresholds,
                                                 threshold))
            sys.stderr.write('kradar-eval: note: --table kradar: {}\n'.format(evaluator.fingerprint(proto, threshold)))
            continue
        at = '' if not several else ', {}'.format(report.threshold_text(threshold).replace(
            'score >', 'detections with score >'))
        if len(evs) == 1 or args.full:   # a single protocol: its own table, as the dataset logs it
            for ev in evs:
                sys.stdout.write('=== protocol: {}{} ===\n{}\n{}\n'.format(
                    ev.protocol.name, at, ev.result_str, evaluator.fingerprint(ev.protocol, threshold)))
        if len(evs) > 1 or args.full:
            if several:
                sys.stdout.write('=== {} ===\n'.format(report.threshold_text(threshold)))
            sys.stdout.write(report.compact_table(evs))
            sys.stdout.write(''.join(evaluator.fingerprint(ev.protocol, threshold) + '\n' for ev in evs))
        if groups_t is not None and args.table:
            from .tables import render
            for ev in evs:
                groups = groups_t[ev.protocol.name]
                caption = evaluator.fingerprint(ev.protocol, threshold)
                sys.stdout.write('=== {} protocol, per condition{} ===\n'.format(
                    ev.protocol.name, '' if threshold is None else
                    ', detections with score > {:g}'.format(threshold)))
                sys.stdout.write(render(groups, args.classes, ev.ious, args.table, caption=caption))
                if args.compare_dt_annos or args.compare_results:
                    sys.stdout.write(render(groups, args.classes, ev.ious, args.table, delta=True, caption=caption))


def _json_payload(args, evaluations, grouped, threshold):
    """The ``--json`` object of one confidence threshold."""
    from . import report
    from .evaluator import flatten_metrics
    evaluator = args.evaluator
    if len(evaluations) == 1:
        name = evaluations[0].protocol.name
        payload = {'protocol': name, 'metrics': report.json_metrics(evaluations[0]),
                   'fingerprint': evaluator.fingerprint(evaluations[0].protocol, threshold),
                   # every key a training run's adapter logs for this evaluation (EchoFusion's names and the 2D
                   # keys included), rounded as it rounds them: what its offline command must reproduce
                   'logged_metrics': dict((k.split('/', 1)[1], v) for k, v in
                                          flatten_metrics(evaluations[0].ap_dict, '_').items())}
        if grouped is not None:
            payload['groups'] = grouped[name]
            payload['metrics'] = grouped[name]['total']['metrics']
    else:
        payload = {'protocol': 'all',
                   'metrics': dict((ev.protocol.name, report.json_metrics(ev)) for ev in evaluations),
                   'fingerprint': dict((ev.protocol.name, evaluator.fingerprint(ev.protocol, threshold))
                                       for ev in evaluations)}
        if grouped is not None:
            payload['groups'] = grouped
    if threshold is not None:
        payload['score_threshold'] = threshold
    if evaluator.excluded:   # samples skipped by the runner (--excluded-samples): how many, and which
        payload['samples_excluded'] = len(evaluator.excluded)
        payload['excluded_samples'] = report.excluded_json(evaluator.excluded)
    return payload


def write_json(args, evaluations, grouped):
    """The first threshold's payload at the top level (as with one threshold); with several, every one's
    under ``score_thresholds`` keyed as K-Radar names its folders ('0.3')."""
    evaluator = args.evaluator
    thresholds = evaluator.score_thresholds
    payload = _json_payload(args, evaluations, grouped, thresholds[0])
    if evaluator.preset:
        payload['preset'] = evaluator.preset
        payload['preset_overrides'] = list(evaluator.preset_overrides)
    if len(thresholds) > 1:
        payload['score_thresholds'] = dict(
            (str(t), _json_payload(args, evaluator.evaluations_at[n], evaluator.groups_at[n]
                                   if evaluator.groups_at else None, t)) for n, t in enumerate(thresholds))
    write_json_file(args.json, payload, sys.stderr if args.table == 'kradar' else sys.stdout)


def write_json_file(path, payload, stream=None):
    """``payload`` as indented JSON at ``path`` (its folder made; through a fresh temporary file renamed over
    the name, ``files.safe_write``)."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        os.makedirs(directory)
    from kradar_plugin.files.safe_write import open_for_write
    with open_for_write(path, 'w') as f:
        json.dump(payload, f, indent=2, sort_keys=True)
    (stream or sys.stdout).write('metrics written to {}\n'.format(path))


class OneLineWarnings(object):
    """While ``kradar-eval`` runs, kradar_plugin's warnings print as one ``kradar-eval: warning:`` line each
    (no file path, no source line; each message once); the evaluator's numba fallback is held back and
    :meth:`numba_note` says it at most once, where numba matters: a broken numba, or a set large enough for a
    progress bar. Other packages' warnings print as Python prints them."""

    def __init__(self):
        self.numba = []
        self.shown = set()
        self.original = None

    def __enter__(self):
        import warnings
        self.original = warnings.showwarning
        warnings.showwarning = self.show
        return self

    def __exit__(self, *exc):
        import warnings
        warnings.showwarning = self.original

    def show(self, message, category, filename, lineno, file=None, line=None):
        from ..ops.numba_gate import NumbaFallbackWarning
        if issubclass(category, NumbaFallbackWarning):
            self.numba.append(str(message))
        elif getattr(category, '__module__', '').startswith('kradar_plugin'):
            text = ' '.join(str(message).split())
            text = text[len('kradar_eval: '):] if text.startswith('kradar_eval: ') else text
            if text not in self.shown:
                self.shown.add(text)
                sys.stderr.write('kradar-eval: warning: {}\n'.format(text))
        else:
            self.original(message, category, filename, lineno, file, line)

    def numba_note(self, n_frames):
        """The one ``note:`` line on plain-Python kernels, or None where numba would not matter."""
        from ._jit import mode, numba_absent
        from ..progress import MIN_FRAMES
        if not self.numba:
            return None
        if numba_absent():
            if n_frames <= MIN_FRAMES:
                return None
            return ('numba is not installed: the evaluator ran as plain Python on {:,} frames (same numbers; '
                    'pip install numba makes sets this large faster)'.format(n_frames))
        return ('numba is installed but did not work here, the evaluator ran as plain Python (same numbers): {}; '
                'pip install --upgrade numba, or KRADAR_EVAL_NO_NUMBA=1 to choose plain Python'.format(mode()[1]))


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
    groups = evaluator.groups[evaluator.protocols[0].name]
    return dict((name, dict(entry['gt'])) for name, entry in groups.items() if entry.get('gt') is not None)


def print_kradar_results(args):
    """``--kradar-results``: read, print the tables (default Markdown) and write ``--json``; returns the exit
    status."""
    from kradar_plugin.files.kradar_results import read_results
    from .tables import render
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
    files = [read_results(path) for path in args.kradar_results]
    for f in files:
        for note in f.notes:
            sys.stderr.write('kradar-eval: note: {}\n'.format(note))
    classes = []
    for f in files:
        classes += [c for c in (printed.class_of(b.cls) for b in f.blocks) if c not in classes]
    counts = _gt_counts(args, classes)
    runs, marked = [], False
    for f in files:
        for conf in f.thresholds():
            groups, cls, ious, unverified = printed.to_groups([b for b in f.blocks if b.conf_text == conf], counts)
            kept = 'every detection' if conf == 'None' else 'detections with score > {}'.format(conf)
            caption = "K-Radar's printed results {}, Conf thr {} ({}); K-Radar's file does not record its " \
                      "evaluator, region or labels".format(f.path, conf, kept)
            sys.stdout.write('=== {}, Conf thr {} ===\n'.format(f.path, conf))
            sys.stdout.write(render(groups, cls, ious, args.table or 'markdown', caption=caption,
                                    unverified=unverified))
            marked = marked or bool(unverified)
            runs.append({'file': f.path, 'conf_thr': conf, 'score_threshold': None if conf == 'None' else float(conf),
                         'conditions': [printed.condition_of(g) for g in groups], 'classes': cls,
                         'groups': groups, 'unverified_zero': sorted([g, k] for g, k in unverified)})
    if marked:
        sys.stdout.write(printed.NO_GT_NOTE + '\n')
    if args.json:
        write_json_file(args.json, {'source': 'kradar-results', 'runs': runs, 'gt_counts_from': args.infos or None})
    return 0
