"""K-Radar's paper tables from grouped results: ``Class | Total | Normal | Overcast | Fog | Rain | Sleet |
LightSnow | HeavySnow`` (then user groups of sequences), an AP3D and an APBEV block with one row per class,
at each chosen IoU, as Markdown, LaTeX or CSV. A weather with no frame, or a class without GT in it, prints
N/A; a ``#GT`` block gives the counts. With a comparison, cells show B - A and, with a bootstrap, its 95%
interval; a group recorded in fewer than two sequences has no interval and shows its count instead
(``43.86 (1 seq)``). A ``caption``
(the scoring fingerprint, ``report.fingerprint``) heads the tables: a paragraph in Markdown, a ``%`` comment
in LaTeX, a ``#`` line in CSV.
"""
from .conditions import WEATHER, WEATHER_TITLES

FORMATS = ('markdown', 'latex', 'csv')
BLOCKS = (('AP3D', '3d'), ('APBEV', 'bev'))


def _cell(entry, key, delta):
    if entry is None:
        return 'N/A'
    values = entry.get('delta' if delta else 'metrics', {})
    value = values.get(key)
    if value is None:
        return 'N/A'
    text = '{:+.2f}'.format(value) if delta else '{:.2f}'.format(value)
    interval = entry.get('delta_ci95' if delta else 'ci95', {}).get(key)
    if interval:
        text += ' [{:.2f}, {:.2f}]'.format(interval[0], interval[1])
    elif entry.get('sequences') is not None and entry['sequences'] < 2:
        text += ' ({} seq)'.format(entry['sequences'])    # a bootstrap over one sequence gives no interval
    elif entry.get('resampled_frames') is not None and entry['resampled_frames'] < 2:
        text += ' ({} frame)'.format(entry['resampled_frames'])
    return text


def column_title(group):
    """A group's column title: ``Total``, K-Radar's weather titles, ``Urban``, ``Night``, a user group's name."""
    kind, _, value = group.partition('/')
    if group == 'total':
        return 'Total'
    if kind == 'weather' and value in WEATHER:
        return WEATHER_TITLES[WEATHER.index(value)]
    return value if kind == 'group' else value.capitalize()


def columns_of(groups):
    """The paper table's columns: Total, the seven weathers (N/A where absent; left out when the groups are
    user groups only, ``--groups-only``), then each user group (``group/<name>``)."""
    users = [g for g in groups if g.startswith('group/')]
    weather = any(g.startswith('weather/') for g in groups) or not users
    return ['total'] + (['weather/' + w for w in WEATHER] if weather else []) + users


def rows(groups, classes, iou, delta=False, unverified=None):
    """The table as a header and rows of text cells (blocks AP3D, APBEV, #GT; columns :func:`columns_of`); a
    group without ``gt`` counts prints ``?`` there. ``unverified``: a ``(group, key)`` set of values that may be
    K-Radar's 0.0 for a class without GT (marked ``(no GT?)``)."""
    columns = columns_of(groups)
    header = ['Class'] + [column_title(c) for c in columns]
    body = []
    for title, metric in BLOCKS:
        body.append(['{} @ IoU {:g}{}'.format(title, iou, ' (B - A)' if delta else '')] + [''] * len(columns))
        for cls in classes:
            key = '{}/{}@{:g}'.format(cls, metric, iou)
            body.append([cls] + [_cell(groups.get(c), key, delta) + (
                ' (no GT?)' if unverified and (c, key) in unverified else '') for c in columns])
    body.append(['#GT'] + [''] * len(columns))
    for cls in classes:
        body.append([cls] + [('?' if groups[c].get('gt') is None else str(groups[c]['gt'].get(cls, 0)))
                             if c in groups else 'N/A' for c in columns])
    return header, body


#: how each format carries the caption line
CAPTIONS = {'markdown': '{}\n', 'latex': '% {}', 'csv': '# {}'}


def render(groups, classes, ious, fmt='markdown', delta=False, caption=None, unverified=None):
    """The tables (one per IoU) in ``fmt``, headed by ``caption`` when given (``unverified``: as :func:`rows`)."""
    if fmt not in FORMATS:
        raise ValueError('table format {!r}: choose one of {}'.format(fmt, FORMATS))
    parts = [CAPTIONS[fmt].format(' '.join(caption.split()))] if caption else []
    for iou in ious:
        header, body = rows(groups, classes, iou, delta, unverified)
        parts.append(_FORMATTERS[fmt](header, body))
    return '\n'.join(parts)


def _markdown(header, body):
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '|'.join(['---'] + ['---:'] * (len(header) - 1)) + '|']
    for row in body:
        if not any(row[1:]):
            row = ['**{}**'.format(row[0])] + row[1:]
        lines.append('| ' + ' | '.join(row) + ' |')
    return '\n'.join(lines) + '\n'


def _latex(header, body):
    esc = lambda t: t.replace('#', '\\#').replace('_', '\\_').replace('%', '\\%')  # noqa: E731
    lines = ['\\begin{tabular}{l' + 'r' * (len(header) - 1) + '}', '\\hline',
             ' & '.join(esc(h) for h in header) + ' \\\\', '\\hline']
    for row in body:
        if not any(row[1:]):
            lines.append('\\multicolumn{{{}}}{{l}}{{\\textbf{{{}}}}} \\\\'.format(len(header), esc(row[0])))
        else:
            lines.append(' & '.join(esc(c) for c in row) + ' \\\\')
    lines += ['\\hline', '\\end{tabular}']
    return '\n'.join(lines) + '\n'


def _csv(header, body):
    import csv
    import io
    buf = io.StringIO()
    csv.writer(buf, lineterminator='\n').writerows([header] + body)
    return buf.getvalue()


_FORMATTERS = {'markdown': _markdown, 'latex': _latex, 'csv': _csv}
