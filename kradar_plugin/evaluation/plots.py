"""The per-condition bar chart of the per-class overview PNG (``kradar-eval --plot-dir`` with conditions):
AP3D and APBEV of Total and each weather with frames, at one IoU threshold, the bootstrap interval as an
error bar when there is one, N/A (no GT) as an empty slot. Drawn on a matplotlib Axes of the caller's
figure (object API, no global backend change)."""
import numpy as np

from .conditions import WEATHER, WEATHER_TITLES

BARS = (('3d', 'AP3D'), ('bev', 'APBEV'))


def condition_columns(groups):
    """(group name, title) of Total and the weathers that have a group, in K-Radar's table order."""
    columns = [('total', 'Total')] + [('weather/' + w, t) for w, t in zip(WEATHER, WEATHER_TITLES)]
    return [(name, title) for name, title in columns if name in groups]


def draw_condition_bars(ax, groups, cls, iou):
    """Bars of ``cls`` at IoU ``iou`` on ``ax``; returns the number of bars drawn with a value."""
    columns = condition_columns(groups)
    x = np.arange(len(columns))
    drawn = 0
    for offset, (metric, label) in zip((-0.2, 0.2), BARS):
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
    ax.set_ylim(0, 100)
    ax.set_ylabel('AP (%)')
    ax.set_title('{} per weather, IoU {:g}'.format(cls, iou), fontsize=9)
    ax.legend(loc='upper right', fontsize=7)
    return drawn
