"""K-Radar's printed results (``complete_results.txt``, read by ``files.kradar_results``) as the groups of our
paper tables and JSON, and our groups printed in that format (``kradar-eval --table kradar``), so that
scripts built around K-Radar's output read ours.

Condition names map to our groups: ``all`` -> ``total``, K-Radar's roads, times and weathers -> ``road/``,
``time/``, ``weather/``, any other name a user added -> ``group/<name>`` (as user groups of sequences are
named). Class keywords map to class names (``sed`` -> ``Sedan``). K-Radar prints 0.0 for a class without GT
in a condition: with GT counts (from ``--infos``) such a value becomes None (N/A); without them every 0.0 is
listed as unverified, and the tables mark it.
"""
import collections

from .conditions import ROADS, TIMES, WEATHER
from .protocols import KRADAR_CLASSES, KRADAR_KEYWORDS

METRICS = (('bev', 'bev'), ('3d', 'ap3d'))


def group_of(condition):
    """Our group name of a condition name K-Radar printed."""
    name = condition.strip().lower()
    if name == 'all':
        return 'total'
    for prefix, known in (('road', ROADS), ('time', TIMES), ('weather', WEATHER)):
        if name in known:
            return '{}/{}'.format(prefix, name)
    return 'group/' + condition.strip()


def condition_of(group):
    """K-Radar's condition name of one of our groups (``total`` -> ``all``)."""
    return 'all' if group == 'total' else group.partition('/')[2]


def class_of(keyword):
    """The class name of a K-Radar keyword (an unknown keyword is kept as written)."""
    return KRADAR_CLASSES[KRADAR_KEYWORDS.index(keyword)] if keyword in KRADAR_KEYWORDS else keyword


def keyword_of(cls):
    """K-Radar's keyword of a class name (a name without one is written as it is)."""
    return KRADAR_KEYWORDS[KRADAR_CLASSES.index(cls)] if cls in KRADAR_CLASSES else cls


def kradar_order(groups):
    """Group names in K-Radar's order: all, roads, times, weathers, then the others in their given order."""
    rank = dict(('total' if g == 'all' else g, k) for k, g in enumerate(
        ['all'] + ['road/' + r for r in ROADS] + ['time/' + t for t in TIMES] + ['weather/' + w for w in WEATHER]))
    groups = list(groups)
    return sorted(groups, key=lambda g: (rank.get(g, len(rank)), groups.index(g)))


def key_of(cls, metric, iou):
    return '{}/{}@{:g}'.format(cls, metric, iou)


def to_groups(blocks, gt_counts=None):
    """``(groups, classes, ious, unverified)`` of the blocks of one confidence threshold: ``groups`` as
    ``grouped.groups_at`` gives them (``gt`` from ``gt_counts`` {group: {class: n}} where known, else None),
    in K-Radar's order; ``unverified``: ``(group, key)`` of the 0.0 values that may mean "no GT"."""
    groups, classes, ious, unverified = collections.OrderedDict(), [], [], set()
    for b in blocks:
        group, cls = group_of(b.condition), class_of(b.cls)
        classes += [] if cls in classes else [cls]
        ious += [v for v in b.ious if v not in ious]
        counts = (gt_counts or {}).get(group)
        entry = groups.setdefault(group, {'frames': None, 'gt': None if counts is None else dict(counts),
                                          'metrics': {}})
        for metric, field in METRICS:
            for iou, value in zip(b.ious, getattr(b, field)):
                key = key_of(cls, metric, iou)
                if counts is not None and not counts.get(cls):
                    value = None    # K-Radar's 0.0 for a class without GT in the condition
                elif counts is None and value == 0.0:
                    unverified.add((group, key))
                entry['metrics'][key] = value
    ordered = collections.OrderedDict((g, groups[g]) for g in kradar_order(groups))
    return ordered, classes, sorted(ious), unverified


def kradar_text(groups, classes, ious, score_threshold):
    """Our groups of one confidence threshold in K-Radar's printed format (``None`` when every detection was
    kept): one block per condition and class in K-Radar's order, IoU thresholds from the highest as K-Radar
    prints them, 0.0 where a class has no GT (as K-Radar writes it)."""
    from kradar_plugin.files.kradar_results import format_block
    conf = 'None' if score_threshold is None else str(float(score_threshold))
    order = sorted(ious, reverse=True)
    out = []
    for group in kradar_order(groups):
        metrics = groups[group].get('metrics', {})
        for cls in classes:
            values = [[metrics.get(key_of(cls, m, iou)) for iou in order] for m, _ in METRICS]
            values = [[0.0 if v is None else v for v in row] for row in values]
            out.append(format_block(conf, condition_of(group), keyword_of(cls), order, values[0], values[1]))
    return ''.join(out)


NO_GT_NOTE = ('(no GT?): K-Radar prints 0.0 for a class without GT in a condition; give --infos (and '
              '--kradar-root for other labels) to print N/A there')
