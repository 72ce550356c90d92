"""The checkpoint sweep's summary: the headline metrics of each checkpoint, the best checkpoint by a chosen
key, and the checkpoints x headline-metrics table written to the log.

Headline metrics, read from the metric names the K-Radar evaluations produce:

- kradar_plugin's evaluator: ``[<branch>/]<Class>/<bev|3d>@<iou>`` (first difficulty column); the first IoU
  threshold listed per class and kind is the headline (the K-Radar protocols list 0.3 first);
- EchoFusion's own keys (also written by the ``legacy`` protocol): ``[<prefix>/]kradar/<Class>_<BEV|3D>_
  <difficulty>_strict`` (first IoU threshold), the first difficulty listed.

The headline names are ``<Class> BEV`` and ``<Class> 3D`` (one column each); a metric dict with neither
(another dataset) has its first numeric metrics as headline. The default key is the BEV headline of the
first class; ``KEY:min`` marks a key where lower is better (``loss``/``error``/``mae``/``mse`` in the name
also mean lower is better). Standard library only.
"""
import collections
import re

_OURS = re.compile(r'^(?:(?P<branch>.+)/)?(?P<cls>[^/]+)/(?P<kind>bev|3d)@(?P<iou>[0-9.]+)$')
_ECHO = re.compile(r'^(?:(?P<prefix>.*)/)?(?P<cls>[^/]+)_(?P<kind>BEV|3D)_(?P<diff>[^/_]+)_strict$')
_LOWER_IS_BETTER = ('loss', 'error', 'mae', 'mse')
FALLBACK_COLUMNS = 6


def headline_keys(metrics):
    """OrderedDict headline name -> metric key, from the metric names (see the module docstring)."""
    ours, echo = collections.OrderedDict(), collections.OrderedDict()
    for key in metrics:
        m = _OURS.match(key)
        if m and m.group('cls') != 'Overall':
            name = '{} {}'.format(m.group('cls'), m.group('kind').upper() if m.group('kind') == 'bev' else '3D')
            ours.setdefault(name, key)
            continue
        m = _ECHO.match(key)
        if m and m.group('cls') != 'Overall':
            echo.setdefault('{} {}'.format(m.group('cls'), m.group('kind')), key)
    found = ours or echo
    if found:  # per class: BEV, then 3D
        classes = collections.OrderedDict((name.rsplit(' ', 1)[0], None) for name in found)
        return collections.OrderedDict((name, found[name]) for cls in classes
                                       for name in (cls + ' BEV', cls + ' 3D') if name in found)
    numeric = [k for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return collections.OrderedDict((k, k) for k in numeric[:FALLBACK_COLUMNS])


def classes_of(headline):
    """{class: [(kind, name), ...]} of headline names ``<Class> <BEV|3D>``; {} for fallback headlines."""
    out = collections.OrderedDict()
    for name in headline:
        if ' ' in name and name.rsplit(' ', 1)[1] in ('BEV', '3D'):
            cls, kind = name.rsplit(' ', 1)
            out.setdefault(cls, []).append((kind, name))
    return out


def parse_key(eval_key):
    """(key, 'greater' | 'less') of ``KEY``, ``KEY:max`` or ``KEY:min``."""
    if eval_key.endswith(':min') or eval_key.endswith(':max'):
        return eval_key[:-4], 'less' if eval_key.endswith(':min') else 'greater'
    return eval_key, 'less' if any(word in eval_key.lower() for word in _LOWER_IS_BETTER) else 'greater'


def choose_key(entries, eval_key=None):
    """(metric key, rule, how it was chosen) for naming the best checkpoint: ``eval_key`` (a metric name
    or a headline name such as ``Sedan BEV``), else the first headline metric of the first successful entry."""
    headline = headline_keys(_first_metrics(entries))
    if eval_key:
        key, rule = parse_key(eval_key)
        return headline.get(key, key), rule, 'chosen'
    if not headline:
        return None, 'greater', 'none'
    name, key = next(iter(headline.items()))
    return key, parse_key(key)[1], 'headline {}'.format(name)


def _first_metrics(entries):
    for entry in entries:
        if entry['status'] == 'ok' and entry['metrics']:
            return entry['metrics']
    return {}


def best_entry(entries, key, rule='greater'):
    """The successful entry with the best value of ``key`` (the earliest of equal ones); None if none has it."""
    best = None
    for entry in entries:
        value = entry['metrics'].get(key) if entry['status'] == 'ok' else None
        if value is None or value != value:  # missing or NaN
            continue
        if best is None or (value > best[0] if rule == 'greater' else value < best[0]):
            best = (value, entry)
    return best[1] if best else None


def summarize(entries, eval_key=None):
    """The summary stored in sweep.json: the key, its rule, the best checkpoint and the headline keys."""
    key, rule, how = choose_key(entries, eval_key)
    best = best_entry(entries, key, rule) if key else None
    headline = headline_keys(_first_metrics(entries))
    return dict(eval_key=key, rule=rule, key_source=how, headline=headline,
                best=None if best is None else dict(checkpoint=best['checkpoint'], stem=best['stem'],
                                                    epoch=best['epoch'], value=best['metrics'][key]))


def table(entries, summary):
    """The checkpoints x headline-metrics table (text), the best row marked with ``*``."""
    headline, key = summary['headline'], summary['eval_key']
    columns = list(headline.items())
    if key and key not in headline.values():
        columns.append((key, key))
    best = summary['best']['checkpoint'] if summary['best'] else None
    rows = [['checkpoint', 'epoch', 'status'] + [name for name, _ in columns]]
    for entry in entries:
        mark = ' *' if entry['checkpoint'] == best else ''
        row = [entry['stem'] + mark, '' if entry['epoch'] is None else str(entry['epoch']), entry['status']]
        for _, metric in columns:
            value = entry['metrics'].get(metric)
            row.append('' if value is None else '{:.4f}'.format(value))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ['  '.join(cell.ljust(w) if i < 3 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in rows]
    lines.insert(1, '-' * len(lines[0]))
    return '\n'.join(line.rstrip() for line in lines)


def best_line(summary):
    if not summary['best']:
        return 'best checkpoint: none (no successful checkpoint has {})'.format(summary['eval_key'])
    best = summary['best']
    return 'best checkpoint by {} ({}, {} is better): {} (epoch {}): {:.4f}'.format(
        summary['eval_key'], summary['key_source'], 'higher' if summary['rule'] == 'greater' else 'lower',
        best['checkpoint'], best['epoch'], best['value'])


def failure_lines(entries):
    return ['failed: {} ({}): {}'.format(e['stem'], e['stage'], e['error']) for e in entries if e['status'] != 'ok']
