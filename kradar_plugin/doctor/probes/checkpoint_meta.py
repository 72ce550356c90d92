"""The ``meta`` of a torch checkpoint, read by the plugin's checkpoint loader without torch and without running
anything the file holds.

``kradar_plugin.loading.load_checkpoint_tree`` reads the object tree exactly as an eval-only run's
``load_checkpoint`` would (same allowed names, same refusals and limits) but reads no storage: every tensor is a
``TensorInfo`` (shape, dtype). So the doctor says before a launch whether the run will load the file, and the
version strings in ``checkpoint['meta']`` give the box-convention check.
"""
import os
import zipfile

META_KEYS = ('mmdet3d_version', 'mmdet_version', 'mmseg_version', 'mmcv_version', 'mmengine_version')


def checkpoint_meta(path):
    """{'path', 'format', 'meta' (True/False), '<package>_version' for META_KEYS found} or {'path', 'error'}
    (and 'refused': the global the loader refuses, when that is why).

    Raises ValueError when ``path`` is not a file (a usage error); any reading problem is an 'error' entry."""
    if not os.path.isfile(path):
        raise ValueError('--checkpoint: no such file %r' % (path,))
    from kradar_plugin.loading.safe_checkpoint import CheckpointError, load_checkpoint_tree
    info = {'path': path}
    try:
        tree = load_checkpoint_tree(path)
    except CheckpointError as e:  # a refused, foreign or truncated file: say why, do not crash the doctor
        info['error'] = e.reason[:600]
        if e.reason.startswith('refused to load the global '):
            info['refused'] = e.reason.split(' ')[5]
        return info
    info['format'] = 'zip' if zipfile.is_zipfile(path) else 'legacy'
    meta = tree.get('meta') if isinstance(tree, dict) else None
    info['meta'] = isinstance(meta, dict)
    info.update((k, meta[k]) for k in META_KEYS if info['meta'] and isinstance(meta.get(k), str))
    return info


def checkpoint_facts(path):
    """Doctor facts of a checkpoint: 'checkpoint' (checkpoint_meta) and 'checkpoint-mmdet3d'."""
    info = checkpoint_meta(path)
    return {'checkpoint': info, 'checkpoint-mmdet3d': info.get('mmdet3d_version')}
