"""Turning an :class:`~kradar_plugin.evaluation.engine.Evaluation` into text, metric dicts, JSON
and precision-recall PNGs (with, given conditions, a per-weather bar chart)."""
import os
import re

import numpy as np

from .conditions import WEATHER, WEATHER_TITLES

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


def _group(title, labels, width):
    """A header cell spanning ``len(labels)`` value cells of ``width`` characters."""
    span = len(labels) * (width + 1) - 1
    return (' ' + title[:span].center(span)), ' ' + ' '.join('{:>{}}'.format(label, width) for label in labels)


def compact_table(evaluations, width=7):
    """One table for one or more evaluations of the same data: rows class x metric, a column group per
    protocol with its IoU thresholds (first difficulty column: KITTI ``easy``, or ``all`` distances) and,
    with several protocols, the last minus the first; then, for distance-binned protocols, their AP per
    distance bin and IoU threshold."""
    first = evaluations[0]
    classes = list(first.classes) + (['Overall'] if len(first.classes) > 1 else [])
    metrics = [m for m in ('bev', '3d', 'bbox') if all(m in ev.ap for ev in evaluations)]
    ious = ['{:g}'.format(v) for v in first.ious]
    same_ious = all(tuple(ev.ious) == tuple(first.ious) for ev in evaluations)

    def table(ev, metric, c):
        ap = ev.ap[metric]
        return ap.mean(axis=0) if c == len(ev.classes) else ap[c]

    def head(spans):   # the two header lines: (title, labels) per column group
        cells = [_group(title, labels, width) for title, labels in spans]
        return ['{:<24s}'.format(text) + ''.join(' |' + cell[k] for cell in cells)
                for k, text in enumerate(('', 'class / metric'))]

    def row(cls, metric, tables):   # a row's label, then its value cells
        return '{:<24s}'.format('{} {}'.format(cls, metric)[:24]) + cells(tables)

    def cells(tables, fmt='{:>{}.2f}'):
        return ''.join(' | ' + ' '.join(fmt.format(x, width) for x in t) for t in tables)

    lines = ['K-Radar AP (%), {} frames; columns: IoU threshold ({})'.format(
        first.n_frames, ', '.join('{}: {}'.format(ev.protocol.name, ev.columns[0]) for ev in evaluations))]
    diff = len(evaluations) > 1 and same_ious
    lines += head([(ev.protocol.name, ['{:g}'.format(v) for v in ev.ious]) for ev in evaluations] + (
        [('{} - {}'.format(evaluations[-1].protocol.name, first.protocol.name), ious)] if diff else []))
    for c, cls in enumerate(classes):
        for metric in metrics:
            values = [table(ev, metric, c)[0] for ev in evaluations]
            lines.append(row(cls, metric, values) + (cells([values[-1] - values[0]], '{:>+{}.2f}') if diff else ''))
    for ev in evaluations:
        if ev.protocol.difficulty != 'distance' or len(ev.columns) < 2:
            continue
        lines.append('')
        lines.append('{} by distance (AP %); column groups: distance bin, columns: IoU threshold'.format(
            ev.protocol.name))
        lines += head([(b, ['{:g}'.format(v) for v in ev.ious]) for b in ev.columns[1:]])
        for c, cls in enumerate(classes):
            for metric in metrics:
                lines.append(row(cls, metric, table(ev, metric, c)[1:]))
    return '\n'.join(line.rstrip() for line in lines) + '\n'


def _safe(name):
    return re.sub(r'[^A-Za-z0-9_.-]+', '_', name)


def _figure(width):
    """A figure on the Agg canvas: matplotlib's object API (imported here, not at module import), so no pyplot
    figure is ever registered and nothing leaks between calls."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(width, 4))
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path, paths):
    from kradar_plugin.files.safe_write import open_for_write
    with open_for_write(path) as f:    # never through a link planted at the name
        fig.savefig(f, format='png', dpi=80)
    fig.clf()
    paths.append(path)


def _axes(ax, xlabel):
    ax.set(xlim=(0, 1.02), ylim=(0, 1.02), xlabel=xlabel, ylabel='precision')


def save_pr_curves(ev, out_dir):
    """One PNG per class, metric and IoU threshold (first column); returns the paths written."""
    if not os.path.isdir(out_dir):
        os.makedirs(out_dir)
    paths = []
    for cls in ev.classes:
        for metric in ev.metrics:
            for i, iou in enumerate(ev.ious):
                curve = ev.curves[(metric, cls, 0, i)]
                fig = _figure(5)
                ax = fig.add_subplot(1, 1, 1)
                ax.plot(curve['threshold_recall'], curve['threshold_precision'], '.', ms=3, alpha=0.5,
                        label='operating points')
                label = ('interpolated (R40)' if ev.protocol.interpolation == 'r40'
                         else '41-point array vs index/40 ({})'.format(ev.protocol.interpolation))
                ax.plot(curve['recall'], curve['precision'], '-', label=label)
                _axes(ax, 'recall')
                ax.set_title('{} {} {}@{} AP={:.2f} ({})'.format(
                    ev.protocol.name, cls, metric, iou_key(iou), ev.ap[metric][ev.classes.index(cls), 0, i],
                    ev.columns[0]))
                ax.legend(loc='lower left', fontsize=7)
                _save(fig, os.path.join(out_dir, '{}_{}_{}_iou{}.png'.format(
                    ev.protocol.name, _safe(cls), metric, iou_key(iou))), paths)
    return paths


def save_overviews(ev, out_dir, groups=None):
    """One PNG per class with every precision-recall curve of the evaluation (a panel per metric, a line
    per IoU threshold, first column) and, with condition ``groups`` (``grouped.groups_at``), a panel of
    AP3D / APBEV per weather at the first IoU threshold; ``<protocol>_<Class>_overview.png``. Returns the
    paths written."""
    if not os.path.isdir(out_dir):
        os.makedirs(out_dir)
    paths = []
    panels = max(len(ev.metrics), 1) + (1 if groups else 0)
    for c, cls in enumerate(ev.classes):
        fig = _figure(4.2 * panels)
        if groups:
            draw_condition_bars(fig.add_subplot(1, panels, panels), groups, cls, ev.ious[0])
        for m, metric in enumerate(ev.metrics):
            ax = fig.add_subplot(1, panels, m + 1)
            for i, iou in enumerate(ev.ious):
                curve = ev.curves[(metric, cls, 0, i)]
                ax.plot(curve['recall'], curve['precision'], '-',
                        label='IoU {} AP {:.2f}'.format(iou_key(iou), ev.ap[metric][c, 0, i]))
                ax.plot(curve['threshold_recall'], curve['threshold_precision'], '.', ms=2, alpha=0.3,
                        color=ax.lines[-1].get_color())
            _axes(ax, RECALL_AXES[ev.protocol.interpolation])
            ax.set_title('{} {} ({})'.format(cls, metric, ev.columns[0]), fontsize=9)
            ax.legend(loc='lower left', fontsize=7)
        fig.suptitle('{} protocol, {} frames'.format(ev.protocol.name, ev.n_frames), fontsize=10)
        _save(fig, os.path.join(out_dir, '{}_{}_overview.png'.format(ev.protocol.name, _safe(cls))), paths)
    return paths


def draw_condition_bars(ax, groups, cls, iou):
    """The per-condition bars of an overview PNG on the caller's Axes: AP3D and APBEV of ``cls`` at IoU ``iou`` for
    Total and each weather with a group, the bootstrap interval as an error bar when there is one, N/A (no GT)
    as an empty slot; returns the number of bars drawn with a value."""
    columns = [(name, title) for name, title in [('total', 'Total')] + [
        ('weather/' + w, t) for w, t in zip(WEATHER, WEATHER_TITLES)] if name in groups]
    x = np.arange(len(columns))
    drawn = 0
    for offset, (metric, label) in zip((-0.2, 0.2), (('3d', 'AP3D'), ('bev', 'APBEV'))):
        key = '{}/{}@{:g}'.format(cls, metric, iou)
        values = [groups[name]['metrics'].get(key) for name, _ in columns]
        heights = np.array([v if v is not None else 0.0 for v in values])
        errors = None
        if all('ci95' in groups[name] for name, _ in columns):
            bounds = [groups[name]['ci95'].get(key) or [h, h] for (name, _), h in zip(columns, heights)]
            errors = np.array([[h - lo for (lo, _), h in zip(bounds, heights)],
                               [hi - h for (_, hi), h in zip(bounds, heights)]]).clip(min=0)
        ax.bar(x + offset, heights, width=0.4, yerr=errors, label=label, capsize=2)
        drawn += sum(v is not None for v in values)
    ax.set_xticks(x)
    ax.set_xticklabels(['{}\n{} GT'.format(title, groups[name]['gt'].get(cls, 0)) for name, title in columns],
                       fontsize=6)
    ax.set(ylim=(0, 100), ylabel='AP (%)')
    ax.set_title('{} per weather, IoU {:g}'.format(cls, iou), fontsize=9)
    ax.legend(loc='upper right', fontsize=7)
    return drawn


#: the recall axis of an overview plot per ``Protocol.interpolation`` (the 41-point array is plotted against
#: index / 40, its nominal recall)
RECALL_AXES = {'11of41': 'recall (index / 40 of the 41-point array)',
               'all41': 'recall (index / 40 of the 41-point array)', 'r40': 'recall'}


def z_convention_note(ev, ratio=0.25, floor=20.0):
    """A note when 3D AP is far below BEV AP at the same IoU (below ``ratio`` times a BEV AP of at least
    ``floor``): on the same matches that is the sign of boxes whose z is read in the wrong convention."""
    if '3d' not in ev.ap or 'bev' not in ev.ap:
        return None
    bev, d3 = ev.ap['bev'][:, 0, 0], ev.ap['3d'][:, 0, 0]
    low = [cls for cls, b, d in zip(ev.classes, bev, d3) if b >= floor and d < ratio * b]
    if not low:
        return None
    return ('{} protocol: 3D AP is far below BEV AP at IoU {:g} for {} ({:.1f} vs {:.1f}): the detections\' z '
            'may be read in the wrong convention; see --dt-z-is-bottom and --box-convention'.format(
                ev.protocol.name, ev.ious[0], ', '.join(low), float(d3[ev.classes.index(low[0])]),
                float(bev[ev.classes.index(low[0])])))


#: how each ``Protocol.interpolation`` reads its AP points (the fingerprint's wording)
AP_POINTS = {'11of41': '11 points (every 4th of 41)', 'all41': '41 points (recall 0 included, /41)',
             'r40': '40 points (R40)'}
#: ``Protocol.drop_frames_without_gt`` -> the frame rule's wording
FRAME_RULES = {True: 'without GT dropped', False: 'all kept'}


def threshold_text(score_threshold):
    """``'score > 0.3'`` (``'score > 0.0'``: K-Radar's spelling of its thresholds), or ``'every detection'``."""
    return 'every detection' if score_threshold is None else 'score > {}'.format(float(score_threshold))


def fingerprint(proto, classes, score_threshold=None, label_version=None, preset=None, region=True, excluded=None):
    """One line stating how the numbers were scored, to paste into a caption: protocol, AP points, z_center,
    IoU thresholds, region (``region``: False when the inputs were not filtered here), classes and the class
    rule, the frame rule, the confidence threshold, the label version (``unknown`` when not recorded), the
    preset and, when samples failed and were skipped (``excluded``), ``N samples excluded`` and which."""
    from .presets import azimuth_text
    ignored = ['{} ignored for {}'.format(b, a) for a, b in proto.similar_classes if a in classes]
    r = proto.pcd_limit_range
    where = 'x {:g}..{:g}, y {:g}..{:g}, z {:g}..{:g} m, azimuth {}{}'.format(
        r[0], r[3], r[1], r[4], r[2], r[5], azimuth_text(proto.azimuth_range),
        '' if proto.dt_azimuth_filter else ' (GT)') if region else 'as given (not filtered here)'
    fields = (('protocol', proto.name), ('AP', AP_POINTS[proto.interpolation]),
              ('z_center', str(float(proto.z_center))),
              ('IoU', '/'.join('{:g}'.format(v) for v in proto.iou_thresholds)), ('region', where),
              ('classes', '{} ({})'.format(', '.join(classes), '; '.join(ignored) or 'no ignored class')),
              ('frames', FRAME_RULES[bool(proto.drop_frames_without_gt)]),
              ('confidence', threshold_text(score_threshold)),
              ('labels', label_version or 'unknown'), ('preset', preset or 'none'))
    line = 'K-Radar scoring: ' + '; '.join('{} {}'.format(k, v) for k, v in fields)
    return line + ('; ' + excluded_text(excluded) if excluded else '')


def excluded_text(excluded, full=False):
    """``N samples excluded: index 70 (label_file ...), ...`` of skipped samples (dicts with ``index``, and
    ``identity`` (name, value) pairs, ``type``, ``message``): the first identity field, or all and the
    error with ``full``."""
    def one(failure):
        fields = [tuple(f) for f in failure.get('identity') or []][:None if full else 1]
        text = 'index {}'.format(failure['index'])
        text += ' ({})'.format('; '.join('{} {}'.format(k, v) for k, v in fields)) if fields else ''
        return text + (': {}: {}'.format(failure.get('type'), failure.get('message')) if full else '')
    return '{} samples excluded: {}'.format(len(excluded), ', '.join(one(f) for f in excluded))


def excluded_json(excluded):
    """The skipped samples as JSON-ready dicts (index, identity as an object, type, message, stage)."""
    return [dict(index=int(f['index']), identity=dict((str(k), v) for k, v in f.get('identity') or []),
                 type=f.get('type'), message=f.get('message'), stage=f.get('stage')) for f in excluded]
