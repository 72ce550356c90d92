"""The per-condition bar chart (``kradar-eval --plot-dir`` with conditions): for each class and IoU, AP3D
and APBEV of Total and each weather, with the bootstrap interval as an error bar when there is one."""
import os

from .conditions import WEATHER, WEATHER_TITLES


def save_condition_bars(groups, classes, protocol_name, ious, out_dir):
    """Write one PNG per class; returns the paths."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np
    columns = [('total', 'Total')] + [('weather/' + w, t) for w, t in zip(WEATHER, WEATHER_TITLES)]
    columns = [(c, t) for c, t in columns if c in groups]
    if not os.path.isdir(out_dir):
        os.makedirs(out_dir)
    paths = []
    for cls in classes:
        fig, axes = plt.subplots(1, len(ious), figsize=(4.5 * len(ious), 3.6), squeeze=False)
        for ax, iou in zip(axes[0], ious):
            x = np.arange(len(columns))
            for offset, (metric, label) in zip((-0.2, 0.2), (('3d', 'AP3D'), ('bev', 'APBEV'))):
                key = '{}/{}@{:g}'.format(cls, metric, iou)
                values = [groups[c]['metrics'].get(key) for c, _ in columns]
                heights = [v if v is not None else 0.0 for v in values]
                errors = None
                if all('ci95' in groups[c] for c, _ in columns):
                    lo_hi = [groups[c]['ci95'].get(key) or [h, h] for (c, _), h in zip(columns, heights)]
                    errors = np.array([[h - lo for (lo, _), h in zip(lo_hi, heights)],
                                       [hi - h for (_, hi), h in zip(lo_hi, heights)]]).clip(min=0)
                ax.bar(x + offset, heights, width=0.4, yerr=errors, label=label, capsize=2)
            ax.set_xticks(x)
            ax.set_xticklabels([t for _, t in columns], rotation=45, ha='right', fontsize=8)
            ax.set_ylim(0, 100)
            ax.set_title('{} IoU {:g} ({})'.format(cls, iou, protocol_name), fontsize=9)
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = os.path.join(out_dir, 'conditions_{}_{}.png'.format(protocol_name, cls.replace(' ', '_')))
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths
