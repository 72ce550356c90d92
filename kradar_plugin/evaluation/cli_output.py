"""``kradar-eval``'s output: the text tables per confidence threshold (each protocol's own table, the compact
table, the paper tables, K-Radar's printed format) and the ``--json`` file; moved out of ``cli`` so that the
CLI stays a parser and a dispatcher."""
import json
import os
import sys


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
        if args.table == 'kradar':   # stdout holds K-Radar's complete_results.txt text alone
            _write_kradar(evaluator, groups_t, threshold)
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


def _write_kradar(evaluator, groups_t, threshold):
    """``--table kradar``: the first protocol's groups at one threshold in K-Radar's format on stdout, its
    scoring on stderr (K-Radar's format has no place for it)."""
    from .printed_results import kradar_text
    proto = evaluator.protocols[0]
    groups = groups_t[proto.name]
    sys.stdout.write(kradar_text(groups, evaluator.classes, proto.iou_thresholds, threshold))
    sys.stderr.write('kradar-eval: note: --table kradar: {}\n'.format(evaluator.fingerprint(proto, threshold)))


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
