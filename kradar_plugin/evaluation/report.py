"""Turning an :class:`~kradar_plugin.evaluation.kradar_eval.Evaluation` into text, metric dicts, JSON
and precision-recall PNGs."""
import os
import re

import numpy as np

_ROW = (('bbox', 'bbox AP:'), ('bev', 'bev  AP:'), ('3d', '3d   AP:'))
_ECHO = (('3d', '3D'), ('bev', 'BEV'), ('bbox', '2D'))


def _fmt(values, digits):
    return ', '.join('{:.{}f}'.format(float(v), digits) for v in values)


def result_string(ev):
    """The printed table. ``legacy`` reproduces EchoFusion's text; the others add a header line and
    label their columns."""
    proto = ev.protocol
    lines = []
    if not proto.echofusion_keys:
        lines.append("K-Radar evaluation, protocol '{}' ({} frames): {}\n".format(
            proto.name, ev.n_frames, proto.description))
        lines.append('columns: {}\n'.format(', '.join(ev.columns)))
    for c, cls in enumerate(ev.classes):
        for i, iou in enumerate(ev.ious):
            lines.append('{} AP@{}:\n'.format(cls, ', '.join('{:.2f}'.format(iou) for _ in range(3))))
            for metric, label in _ROW:
                if metric in ev.ap:
                    lines.append(label + _fmt(ev.ap[metric][c, :, i], 4) + '\n')
            if ev.aos is not None:
                lines.append('aos  AP:' + _fmt(ev.aos[c, :, i], 2) + '\n')
    if len(ev.classes) > 1:
        lines.append('\nOverall AP@{}:\n'.format(', '.join(ev.columns)))
        for metric, label in _ROW:
            if metric in ev.ap:
                lines.append(label + _fmt(ev.ap[metric].mean(axis=0)[:, 0], 4) + '\n')
        if ev.aos is not None:
            lines.append('aos  AP:' + _fmt(ev.aos.mean(axis=0)[:, 0], 2) + '\n')
    return ''.join(lines)


def iou_key(iou):
    return '{:g}'.format(iou)


def ap_dict(ev):
    """Flat metrics. ``legacy`` first gets EchoFusion's exact keys and values
    (``kradar/<Class>_<3D|BEV|2D>_<easy|moderate|hard>_<strict|loose>``: strict holds the first IoU
    threshold, loose the last, as EchoFusion's overwriting loop leaves them), then every protocol gets
    ``<Class>/<metric>@<iou>`` (first column) and, for distance bins, ``.../<bin>``."""
    out = {}
    proto = ev.protocol
    if proto.echofusion_keys:
        for c, cls in enumerate(ev.classes):
            for i in range(len(ev.ious)):
                for k, diff in enumerate(ev.columns):
                    postfix = '{}_{}'.format(diff, 'strict' if i == 0 else 'loose')
                    for metric, tag in _ECHO:
                        if metric in ev.ap:
                            out['kradar/{}_{}_{}'.format(cls, tag, postfix)] = float(ev.ap[metric][c, k, i])
        if len(ev.classes) > 1:
            for k, diff in enumerate(ev.columns):
                for metric, tag in _ECHO:
                    if metric in ev.ap:
                        out['kradar/Overall_{}_{}'.format(tag, diff)] = float(ev.ap[metric].mean(axis=0)[k, 0])
    per_bin = proto.difficulty == 'distance'
    names = list(ev.classes) + (['Overall'] if len(ev.classes) > 1 else [])
    for c, cls in enumerate(names):
        for metric in ev.metrics:
            table = ev.ap[metric].mean(axis=0) if cls == 'Overall' and c == len(ev.classes) else ev.ap[metric][c]
            for i, iou in enumerate(ev.ious):
                base = '{}/{}@{}'.format(cls, metric, iou_key(iou))
                out[base] = float(table[0, i])
                if per_bin:
                    for k in range(1, len(ev.columns)):
                        out['{}/{}'.format(base, ev.columns[k])] = float(table[k, i])
    return out


_UNAMBIGUOUS = re.compile(r'^[^/]+/(bbox|bev|3d)@')


def json_metrics(ev):
    """The ``--json`` metrics: ``<Class>/<bev|3d>@<iou>[/<bin>]`` in percent (2D only when real)."""
    out = {}
    for key, value in ev.ap_dict.items():
        m = _UNAMBIGUOUS.match(key)
        if m and (m.group(1) != 'bbox' or ev.protocol.bbox_2d == 'if_real'):
            out[key] = value
    return out


def side_by_side(evaluations):
    """One table with a column per protocol (first difficulty column / all distances) and the
    difference between the last and the first protocol."""
    names = [ev.protocol.name for ev in evaluations]
    first = evaluations[0]
    header = '{:<18s} {:<5s} {:>5s} '.format('class', 'type', 'IoU') + ' '.join(
        '{:>9s}'.format(n) for n in names)
    if len(evaluations) > 1:
        header += ' {:>9s}'.format('{}-{}'.format(names[-1], names[0])[:9])
    lines = ['AP (%) side by side; first column of each protocol ({})'.format(
        ', '.join('{}: {}'.format(ev.protocol.name, ev.columns[0]) for ev in evaluations)), header]
    for c, cls in enumerate(first.classes):
        for metric in ('bev', '3d', 'bbox'):
            if not all(metric in ev.ap for ev in evaluations):
                continue
            for i, iou in enumerate(first.ious):
                values = [ev.ap[metric][c, 0, i] for ev in evaluations]
                row = '{:<18s} {:<5s} {:>5s} '.format(cls, metric, iou_key(iou)) + ' '.join(
                    '{:9.4f}'.format(v) for v in values)
                if len(values) > 1:
                    row += ' {:+9.4f}'.format(values[-1] - values[0])
                lines.append(row)
    return '\n'.join(lines) + '\n'


def _safe(name):
    return re.sub(r'[^A-Za-z0-9_.-]+', '_', name)


def save_pr_curves(ev, out_dir):
    """One PNG per class, metric and IoU threshold (first column); returns the paths written.

    Uses matplotlib's object API on the Agg canvas (imported here, not at module import), so no
    pyplot figure is ever registered and nothing leaks between calls.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    if not os.path.isdir(out_dir):
        os.makedirs(out_dir)
    paths = []
    for cls in ev.classes:
        for metric in ev.metrics:
            for i, iou in enumerate(ev.ious):
                curve = ev.curves[(metric, cls, 0, i)]
                fig = Figure(figsize=(5, 4))
                FigureCanvasAgg(fig)
                ax = fig.add_subplot(1, 1, 1)
                ax.plot(curve['threshold_recall'], curve['threshold_precision'], '.', ms=3, alpha=0.5,
                        label='operating points')
                label = ('interpolated (R40)' if ev.protocol.interpolation == 'r40'
                         else '41-point array vs index/40 ({})'.format(ev.protocol.interpolation))
                ax.plot(curve['recall'], curve['precision'], '-', label=label)
                ax.set_xlim(0, 1.02)
                ax.set_ylim(0, 1.02)
                ax.set_xlabel('recall')
                ax.set_ylabel('precision')
                ax.set_title('{} {} {}@{} AP={:.2f} ({})'.format(
                    ev.protocol.name, cls, metric, iou_key(iou), ev.ap[metric][ev.classes.index(cls), 0, i],
                    ev.columns[0]))
                ax.legend(loc='lower left', fontsize=7)
                path = os.path.join(out_dir, '{}_{}_{}_iou{}.png'.format(
                    ev.protocol.name, _safe(cls), metric, iou_key(iou)))
                fig.savefig(path, dpi=80)
                fig.clf()
                paths.append(path)
    return paths
