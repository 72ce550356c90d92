"""``kradar-eval``: evaluate saved K-Radar annotations or model results offline (thin CLI).

The console script enters through ``kradar_cli`` (outside the package), which turns off the framework
registration that ``import kradar_plugin`` does for configs: no torch, mmcv or mmdet is imported here,
and numba only when an evaluation runs.
"""
import argparse
import json
import os
import sys

from .protocols import PROTOCOL_NAMES


def _parser():
    p = argparse.ArgumentParser(
        prog='kradar-eval',
        description='K-Radar evaluation with the legacy (EchoFusion), revised (K-Radar eval_revised) or '
                    'fixed protocol, on evaluator-layout annotation pickles or on an info pickle plus saved '
                    'model results. One protocol prints its own table (EchoFusion\'s text for legacy); '
                    '--protocol all prints one compact table with the three side by side.')
    p.add_argument('--gt-annos', help='pickle: list of per-frame GT dicts (EchoFusion format_anno layout)')
    p.add_argument('--dt-annos', help='pickle: list of per-frame detection dicts (same layout + score)')
    p.add_argument('--infos', help='EchoFusion info pickle (e.g. kradar_infos_val.pkl)')
    p.add_argument('--results', help='pickle of per-frame model results (as saved by KRadarDataset.evaluate)')
    p.add_argument('--classes', nargs='+', default=['Sedan'], help='classes to evaluate (default: Sedan)')
    p.add_argument('--protocol', default='legacy', choices=list(PROTOCOL_NAMES) + ['all'])
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
    p.add_argument('--plot-dir', help='save a precision-recall PNG per class, metric and IoU, and an overview '
                                      'PNG per class and protocol, here')
    p.add_argument('--no-progress', action='store_true',
                   help='no progress bar (shown on stderr for sets over 5,000 frames)')
    return p


def _evaluations(args):
    from .kradar_eval import evaluate_protocols, fields_read, warm_up
    from .loading import read_checked
    from .progress import make_bar
    overrides = {}
    if args.distance_edges is not None:
        overrides['distance_edges'] = tuple(args.distance_edges)
    names = list(PROTOCOL_NAMES) if args.protocol == 'all' else [args.protocol]
    annos_mode = args.gt_annos or args.dt_annos
    infos_mode = args.infos or args.results
    if bool(annos_mode) == bool(infos_mode) or (annos_mode and not (args.gt_annos and args.dt_annos)) or (
            infos_mode and not (args.infos and args.results)):
        raise ValueError('give either --gt-annos and --dt-annos, or --infos and --results')
    if annos_mode:
        fields = fields_read(names, args.iou_mode, args.eval_types, **overrides)
        gt, dt = read_checked(args.gt_annos, args.dt_annos, fields, meanwhile=lambda: warm_up(
            names, args.iou_mode, args.eval_types, **overrides))
        bar = make_bar(len(gt), not args.no_progress)
        return evaluate_protocols(gt, dt, args.classes, names, args.iou_mode, args.eval_types, progress=bar,
                                  **overrides)
    return _evaluate_results(args, names, overrides, make_bar)


def _evaluate_results(args, names, overrides, make_bar):
    """--infos / --results: both files gathered into columns once (in worker processes for large files,
    while numba warms up), then converted per protocol (its region and frame policy)."""
    from kradar_plugin.datasets.box_convention import resolve_box_convention
    from kradar_plugin.datasets.kradar_columns import Converted, gather_infos, gather_result_frames, info_list
    from .kradar_eval import evaluate_protocols, fields_read, warm_up
    from .loading import read_pair
    from .protocols import get_protocol
    classes = tuple(args.classes)
    convention = resolve_box_convention(args.box_convention)
    protos = [get_protocol(name, **overrides) for name in names]
    gt, dt = read_pair((('--infos', args.infos, lambda infos: gather_infos(info_list(infos))),
                        ('--results', args.results, lambda results: gather_result_frames(list(results), classes))),
                       meanwhile=lambda: warm_up(protos, args.iou_mode, args.eval_types))
    converted = Converted(gt, dt, classes, convention, args.dt_z_is_bottom)
    fields = fields_read(protos, args.iou_mode, args.eval_types)
    out = []
    for proto in protos:
        gt_side, dt_side, _ = converted.sides(proto, fields)
        bar = make_bar(len(gt_side), not args.no_progress)
        out.extend(evaluate_protocols(gt_side, dt_side, args.classes, [proto], args.iou_mode, args.eval_types,
                                      progress=bar))
    return out


def main(argv=None):
    args = _parser().parse_args(argv)
    from . import report
    try:
        if args.plot_dir:
            try:
                import matplotlib  # noqa: F401  (checked before the evaluation runs)
            except ImportError:
                raise ValueError('--plot-dir needs matplotlib (pip install matplotlib)')
        evaluations = _evaluations(args)
    except ValueError as exc:
        sys.stderr.write('kradar-eval: error: {}\n'.format(exc))
        return 2
    if len(evaluations) == 1 or args.full:   # a single protocol: its own table, as the dataset logs it
        for ev in evaluations:
            sys.stdout.write('=== protocol: {} ===\n{}\n'.format(ev.protocol.name, ev.result_str))
    if len(evaluations) > 1 or args.full:
        sys.stdout.write(report.compact_table(evaluations))
    if args.json:
        if len(evaluations) == 1:
            payload = {'protocol': evaluations[0].protocol.name, 'metrics': report.json_metrics(evaluations[0])}
        else:
            payload = {'protocol': 'all',
                       'metrics': dict((ev.protocol.name, report.json_metrics(ev)) for ev in evaluations)}
        directory = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(directory):
            os.makedirs(directory)
        with open(args.json, 'w') as f:
            json.dump(payload, f, indent=2, sort_keys=True)
        sys.stdout.write('metrics written to {}\n'.format(args.json))
    if args.plot_dir:
        paths = []
        for ev in evaluations:
            paths.extend(report.save_pr_curves(ev, args.plot_dir))
            paths.extend(report.save_overviews(ev, args.plot_dir))
        sys.stdout.write('{} precision-recall plots written to {}\n'.format(len(paths), args.plot_dir))
    return 0


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
