"""Reading ``kradar-eval``'s input files: in child processes while this one starts numba.

The policy (what a file may hold, the limits, the child process with its address-space and time limits,
one error line naming the file) is :mod:`safe_load`'s; here are the evaluator's two-file reads. Each child
reads one file and turns it into a few flat arrays (annotations checked and concatenated, or infos /
results gathered), which alone come back through a pipe, while the caller's ``meanwhile`` (the evaluator's
warm-up) runs here.

Untrusted files are always read in a child (Linux; elsewhere in process with the element limits only).
With ``--trust-pickle``, as before: in process for files under ``safe_load.MIN_PARALLEL_BYTES`` together, one CPU,
no ``fork``, or ``KRADAR_EVAL_LOAD_WORKERS=0``; ``KRADAR_EVAL_LOAD_WORKERS=1`` uses workers whatever the size.
Errors read the same either way: a ValueError naming the file, and the frame, field and value.
"""
from ..loading import safe_load
from .validation import check_side


def load_pickle(path, what, trusted=False, limits=None):
    """The content of ``path`` read in this process (``safe_load.load_file``); ``what`` (e.g. '--gt-annos')
    names it in the ValueError raised for a missing file, a module missing to unpickle it, a class
    ``safe_pickle`` refuses (unless ``trusted``), or a corrupt file."""
    return safe_load.load_file(path, what, trusted, limits)


def read_checked(gt_path, dt_path, fields, meanwhile=None, trusted=False, limits=None, export=None,
                 what=('--gt-annos', '--dt-annos')):
    """(gt, dt) :class:`validation.CheckedSide` of two annotation files (pickles or exported .npz), checked
    for the optional ``fields`` the evaluation reads (``kradar_eval.fields_read``). ``meanwhile()`` runs in
    this process while children read; it is not called when the files are read in process. ``what``: the
    options that name the files; ``export``: a directory to write each side to as .npz (all fields)."""
    from .inputs.npz_layout import annos_side
    from .load_options import exporting
    jobs = []
    for option, path, side in ((what[0], gt_path, 'gt_annos'), (what[1], dt_path, 'dt_annos')):
        def convert(annos, side=side):
            return annos_side(annos, side, None if export else fields, check_side)
        jobs.append((option, path, exporting(convert, export, option, path, 'annos')))
    gt, dt = read_pair(jobs, meanwhile, trusted, limits)
    if gt.n_frames != dt.n_frames:
        raise ValueError('{} {!r} / {} {!r}: gt_annos has {} frames but dt_annos has {}: the lists must be aligned '
                         'frame by frame (different counts usually mean duplicated or truncated distributed '
                         'results)'.format(what[0], gt_path, what[1], dt_path, gt.n_frames, dt.n_frames))
    return gt, dt


def read_pair(jobs, meanwhile=None, trusted=False, limits=None):
    """``(convert(content of path) for what, path, convert in jobs)``: see ``safe_load.read``."""
    return safe_load.read(jobs, meanwhile, trusted, limits)
