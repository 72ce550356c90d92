"""The checkpoint sweep's plot: headline AP against epoch, one panel per class (BEV and 3D lines), the best
checkpoint marked; ``work_dir/sweep_ap.png``. matplotlib (Agg backend) is imported only when plotting; a
missing matplotlib skips the plot with a reason instead of failing the sweep."""
from .summary import classes_of

PLOT_FILE = 'sweep_ap.png'


def plot_sweep(entries, summary, path):
    """Write the PNG; returns (path, None) or (None, why it was not written)."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:
        return None, 'matplotlib is not installed ({})'.format(exc)
    ok = [e for e in entries if e['status'] == 'ok']
    if not ok:
        return None, 'no checkpoint was evaluated successfully'
    headline = summary['headline']
    panels = classes_of(headline)
    if not panels:  # not a K-Radar metric dict: one panel with the headline metrics
        panels = {'metrics': [(name, name) for name in headline]}
    xs = [e['epoch'] if e['epoch'] is not None else i + 1 for i, e in enumerate(ok)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 3.5), squeeze=False)
    best = summary['best']['checkpoint'] if summary['best'] else None
    for ax, (cls, lines) in zip(axes[0], panels.items()):
        for label, name in lines:
            key = headline[name]
            ys = [e['metrics'].get(key, float('nan')) for e in ok]
            ax.plot(xs, ys, marker='o', label='{} ({})'.format(label, key))
            for x, y, e in zip(xs, ys, ok):
                if e['checkpoint'] == best and key == summary['eval_key']:
                    ax.plot([x], [y], marker='*', markersize=16, color='gold', markeredgecolor='black',
                            linestyle='none', label='best ({})'.format(e['stem']))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(cls)
        ax.set_xlabel('epoch')
        ax.set_ylabel('AP' if cls != 'metrics' else 'value')
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path, None
