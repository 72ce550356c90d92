"""``kradar-eval``'s options for reading files: the limits of :mod:`safe_load` and ``--export DIR``."""
import sys

from ..loading import safe_load


def add_arguments(parser):
    g = parser.add_argument_group('reading files (see docs/evaluation.md, "Files from others")')
    g.add_argument('--export', metavar='DIR',
                   help='also write each annotation/result input read as DIR/<name>.npz (arrays only, read with '
                        'np.load(allow_pickle=False)): the way to share predictions')
    defaults = safe_load.Limits.from_settings()
    for field, flag in sorted(safe_load.FLAGS.items(), key=lambda kv: kv[1]):
        kind = int if field in ('max_array_elements', 'max_elements') else float
        parser_help = {'max_file_mb': 'refuse input files larger than this (MB)',
                       'max_array_elements': 'elements one array of an input file may hold',
                       'max_elements': 'elements an input file may hold in all (shared references counted)',
                       'memory_mb': 'memory (MiB of address space) the process reading a file may add',
                       'seconds': 'seconds the process reading a file may take'}[field]
        g.add_argument(flag, type=kind, default=None, dest='load_' + field,
                       help='{} (default {}, {})'.format(parser_help, getattr(defaults, field),
                                                        safe_load.LIMIT_SETTINGS[field]))
    return g


def limits(args):
    """The :class:`safe_load.Limits` the arguments (or the settings) give."""
    return safe_load.Limits.from_settings(**dict(
        (field, getattr(args, 'load_' + field, None)) for field in safe_load.FLAGS))


def exporting(convert, directory, what, path, kind):
    """``convert`` that also writes its result (a ``CheckedSide`` of annotations or ``Gathered`` results) to
    ``directory`` as an .npz (``inputs.npz_layout``); ``convert`` itself when ``directory`` is None."""
    if not directory:
        return convert

    def convert_and_write(content):
        from .inputs import npz_layout
        out = convert(content)
        if kind == 'results':
            columns = {'boxes_3d': out.arrays['boxes'], 'scores_3d': out.arrays['scores'],
                       'labels_3d': out.arrays['labels']}
        else:
            columns = dict((k, v) for k, v in out.data.items() if k != 'code')
        written = npz_layout.write(directory, path, kind, columns, out.offsets)
        sys.stdout.write('kradar-eval: {} {!r} exported to {}\n'.format(what, path, written))
        sys.stdout.flush()
        return out
    return convert_and_write
