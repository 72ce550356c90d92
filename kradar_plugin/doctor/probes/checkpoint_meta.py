"""The ``meta`` of a torch checkpoint, read without torch and without running the checkpoint's pickle.

torch.save writes a zip archive whose ``<name>/data.pkl`` holds the object tree, or (before torch 1.6 / with
``_use_new_zipfile_serialization=False``) a sequence of pickles: magic number, protocol version, system info,
the object tree, raw storages. Both are unpickled with an unpickler that builds only plain containers and
replaces every other global (tensors, storages, numpy arrays, mmengine objects) by an inert ``Opaque``:
nothing named by the file is imported or called; the version strings in ``checkpoint['meta']`` survive.
"""
import collections
import io
import os
import pickle
import zipfile

# The first pickle of torch's legacy format (torch/serialization.py MAGIC_NUMBER).
LEGACY_MAGIC = 0x1950a86a20f9469cfc6c
_SAFE_GLOBALS = {
    ('collections', 'OrderedDict'): collections.OrderedDict,
    ('builtins', 'set'): set, ('builtins', 'frozenset'): frozenset, ('builtins', 'slice'): slice,
    ('builtins', 'complex'): complex, ('builtins', 'bytearray'): bytearray,
    ('__builtin__', 'set'): set, ('__builtin__', 'frozenset'): frozenset,
}
META_KEYS = ('mmdet3d_version', 'mmdet_version', 'mmseg_version', 'mmcv_version', 'mmengine_version')


class Opaque(object):
    """Stands for any non-container object in the checkpoint; accepts any construction, keeps nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass

    def __call__(self, *args, **kwargs):
        return Opaque()

    def __repr__(self):
        return '<opaque>'


class _MetaUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        return _SAFE_GLOBALS.get((module, name), Opaque)

    def persistent_load(self, pid):
        return Opaque()


def _unpickle(fileobj):
    return _MetaUnpickler(fileobj, encoding='utf-8', errors='replace').load()


def load_checkpoint_tree(path):
    """The checkpoint's object tree with tensors/storages/foreign objects as ``Opaque``; (tree, format)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith('data.pkl') and n.count('/') == 1]
            if not names:
                raise ValueError('a zip file without <name>/data.pkl: not a torch checkpoint')
            with archive.open(names[0]) as f:
                return _unpickle(io.BytesIO(f.read())), 'zip'
    with open(path, 'rb') as f:
        try:
            magic = _unpickle(f)
        except Exception as e:
            raise ValueError('neither a torch zip checkpoint nor a legacy one (%s: %s)' % (type(e).__name__, e))
        if magic != LEGACY_MAGIC:
            raise ValueError('neither a torch zip checkpoint nor a legacy one (first pickle is not the magic '
                             'number)')
        _unpickle(f)  # protocol version
        _unpickle(f)  # system info
        return _unpickle(f), 'legacy'


def checkpoint_meta(path):
    """{'path', 'format', 'meta' (True/False), '<package>_version' for META_KEYS found} or {'path', 'error'}.

    Raises ValueError when ``path`` is not a file (a usage error); any reading problem is an 'error' entry."""
    if not os.path.isfile(path):
        raise ValueError('--checkpoint: no such file %r' % (path,))
    info = {'path': path}
    try:
        tree, fmt = load_checkpoint_tree(path)
    except Exception as e:  # a foreign or truncated file: say why, do not crash the doctor
        info['error'] = ('%s: %s' % (type(e).__name__, e))[:300]
        return info
    info['format'] = fmt
    meta = tree.get('meta') if isinstance(tree, dict) else None
    info['meta'] = isinstance(meta, dict)
    info.update((k, meta[k]) for k in META_KEYS if info['meta'] and isinstance(meta.get(k), str))
    return info


def checkpoint_facts(path):
    """Doctor facts of a checkpoint: 'checkpoint' (checkpoint_meta) and 'checkpoint-mmdet3d'."""
    info = checkpoint_meta(path)
    return {'checkpoint': info, 'checkpoint-mmdet3d': info.get('mmdet3d_version')}
