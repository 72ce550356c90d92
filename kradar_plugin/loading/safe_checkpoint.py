"""``load_checkpoint``: the checkpoints users are handed (released weights, a labmate's ``epoch_24.pth``), read
without running any code they hold, on every torch from 1.10 on and without torch for the doctor.

* **Formats**: torch's zip and legacy containers (:mod:`torch_archive`); the object pickle by
  :mod:`checkpoint_pickle` (tensors, storages, parameters, numpy, containers, the runners' ``HistoryBuffer`` and
  ``ConfigDict``); any other global is one :class:`CheckpointError` naming it, the file and where, and how
  to opt in. torch's own ``weights_only`` is not used: it refuses numpy arrays and the runners' meta on torch
  2.0 and took a fix for a bypass (CVE-2025-32434) in 2.6; this reader is the same on every version.
* **Bounded**: a storage's declared size must equal its record's (checked before allocating), so memory is
  the file's size plus the object pickle's content, counted and capped as :mod:`safe_pickle` caps it
  (elements, nesting depth, self-containing containers); a truncated or empty file says what is missing.
* **Opt-in** (``trust``): ``trust=True``, ``--trust-checkpoint``, ``KRADAR_TRUST_CHECKPOINT=1`` or the
  config's ``trust_checkpoint=True`` (:func:`set_trusted`) load with ``torch.load(weights_only=False)``
  after one warning: full unpickling runs whatever the file holds.
"""
import collections
import os
import pickle
import struct
import sys
import warnings

from .. import settings
from . import checkpoint_pickle as cp
from .safe_load import LoadError, Limits, one_line
from .safe_numpy import RefusedPickleError
from .safe_pickle import _Settler
from .torch_archive import ArchiveError, open_archive

_TRUSTED = []       # the process's opt-in from a config key or a flag, with where it came from


class CheckpointError(LoadError):
    """A checkpoint that cannot be loaded under the policy: one line naming the file, where and why
    (``path`` and ``reason``: the two parts, for callers that name the file their own way)."""

    def __init__(self, path, reason):
        super(CheckpointError, self).__init__('checkpoint {!r}: {}'.format(path, reason))
        self.path = path
        self.reason = reason


class TrustedCheckpointWarning(UserWarning):
    """A checkpoint is loaded with full unpickling (the user opted in)."""


def set_trusted(source):
    """Opt this process in (``source``: what asked, e.g. ``'--trust-checkpoint'``); None opts out again."""
    _TRUSTED[:] = [source] if source else []


def trusted(trust=False, environ=None):
    """What opted in (``'trust=True'``, the variable, the config key or flag), or None."""
    if trust:
        return 'trust=True'
    if settings.flag(settings.TRUST_CHECKPOINT, environ):
        return '{}=1'.format(settings.TRUST_CHECKPOINT)
    return _TRUSTED[0] if _TRUSTED else None


def name_of(path_or_file):
    if isinstance(path_or_file, (str, bytes)) or hasattr(path_or_file, '__fspath__'):
        return os.fspath(path_or_file) if not isinstance(path_or_file, bytes) else path_or_file.decode()
    return getattr(path_or_file, 'name', None) or '<{} object>'.format(type(path_or_file).__name__)


def load_checkpoint(path_or_file, map_location='cpu', trust=False, limits=None):
    """The checkpoint object of a path or a binary file object, tensors on ``map_location`` (as
    ``torch.load``'s); numpy arrays instead of tensors where torch is not installed. CheckpointError (a
    ValueError) for anything refused, truncated or malformed; FileNotFoundError for a missing file."""
    name = name_of(path_or_file)
    source = trusted(trust)
    if source:
        return _trusted_load(path_or_file, name, map_location, source)
    builder_factory = _torch_builder(map_location) if _torch_installed() else _numpy_builder(True)
    return read(path_or_file, builder_factory, limits)


def load_checkpoint_tree(path_or_file, limits=None):
    """The checkpoint's object tree with every tensor a ``TensorInfo`` (shape, dtype) and no storage read:
    its ``meta`` for the doctor, without torch. Same refusals as :func:`load_checkpoint`."""
    return read(path_or_file, _numpy_builder(False), limits)


def _torch_installed():
    if 'torch' in sys.modules:
        return sys.modules['torch'] is not None         # None: imports of torch are blocked
    import importlib.util
    return importlib.util.find_spec('torch') is not None


def _torch_builder(map_location):
    def make():
        from .tensor_builder import TorchBuilder
        return TorchBuilder(map_location)
    return make


def _numpy_builder(read_data):
    def make():
        from .tensor_builder import NumpyBuilder
        return NumpyBuilder(read_data)
    return make


def read(path_or_file, builder_factory, limits=None):
    """The object of the checkpoint, through the builder ``builder_factory()`` makes; errors as
    :func:`load_checkpoint` says."""
    name = name_of(path_or_file)
    if isinstance(path_or_file, (str, bytes)) or hasattr(path_or_file, '__fspath__'):
        if os.path.isdir(name):
            raise CheckpointError(name, 'is a directory, not a file')
        if not os.path.exists(name):
            raise FileNotFoundError('checkpoint {!r}: no such file'.format(name))
        with open(name, 'rb', buffering=0) as f:
            return _read_open(f, name, builder_factory, limits)
    f = path_or_file
    if not (hasattr(f, 'seek') and hasattr(f, 'readinto')) or not _seekable(f):
        import io
        f = io.BytesIO(f.read())
    return _read_open(f, name, builder_factory, limits)


def _seekable(f):
    try:
        return f.seekable()
    except (AttributeError, ValueError, OSError):
        return False


def _read_open(f, name, builder_factory, limits):
    where = None
    try:
        archive = open_archive(f)
        size = archive.size
        limits = limits or Limits.from_settings()
        pickle_limits = limits.pickle_limits()
        pickle_limits.max_array_elements = max(pickle_limits.max_array_elements, size)
        stream, where = archive.object_pickle()
        builder = builder_factory()
        unpickler = cp.CheckpointUnpickler(stream, archive, builder, where, pickle_limits)
        obj = unpickler.load()
        unpickler.finish()
        return _CheckpointSettler(pickle_limits, builder).value(obj, 0)[0]
    except FileNotFoundError:
        raise
    except (RefusedPickleError, ArchiveError) as exc:
        raise CheckpointError(name, one_line(exc))
    except EOFError as exc:
        raise CheckpointError(name, '{} ends before its STOP opcode ({}): the file is truncated'.format(
            where or 'the object pickle', one_line(exc) or 'end of data'))
    except RecursionError:
        raise CheckpointError(name, '{} is nested too deeply to read'.format(where))
    except (pickle.UnpicklingError, struct.error, ValueError, TypeError, KeyError, IndexError, AttributeError,
            OverflowError, UnicodeDecodeError) as exc:
        raise CheckpointError(name, '{} is malformed ({}: {})'.format(
            where or 'the file', type(exc).__name__, one_line(exc, 300)))


def _trusted_load(path_or_file, name, map_location, source):
    """torch.load with full unpickling, after one warning naming the file and what opted in."""
    import torch
    warnings.warn('kradar_plugin: loading checkpoint {!r} with full unpickling ({}): it can run any code the file '
                  'holds'.format(name, source), TrustedCheckpointWarning, stacklevel=3)
    try:
        return torch.load(path_or_file, map_location=map_location, weights_only=False)
    except TypeError as exc:           # torch < 1.13 has no weights_only
        if 'weights_only' not in str(exc):
            raise
        return torch.load(path_or_file, map_location=map_location)


class _CheckpointSettler(_Settler):
    """:func:`safe_pickle.settle`'s walk, also over tensors (one element each, whatever their size: their
    bytes are the file's records), torch values and the runners' data classes."""

    def __init__(self, limits, builder):
        super(_CheckpointSettler, self).__init__(limits)
        self.builder = builder
        self.torch_values = _torch_value_types(builder)
        self.objects = {}

    def value(self, x, depth):
        t = type(x)
        if t in self.torch_values:
            return x, 1
        if t is cp.TensorRef:
            if x.value is None:
                raise RefusedPickleError('refused: a tensor whose storage was never read')
            return x.value, 1
        if t is cp.DataObject or t is cp.DataDict:
            return self.data_object(x, depth)
        if t is cp.ClassAttribute:
            loaded = sys.modules.get(x.module)
            cls = getattr(loaded, x.cls, None) if loaded is not None else None
            return (getattr(cls, x.name) if isinstance(cls, type) and hasattr(cls, x.name) else x.name), 1
        if t is collections.Counter:
            return self.container(x, dict, depth)
        return super(_CheckpointSettler, self).value(x, depth)

    def data_object(self, x, depth):
        """The object a DataObject/DataDict stands for (made once, and registered before its state is walked)."""
        hit = self.objects.get(id(x))
        if hit is not None:
            return hit[1], 1
        if type(x) is cp.DataDict:
            items, count = self.container(dict(x), dict, depth + 1)
            made = _materialize(x.module, x.name, items, True)
            self.objects[id(x)] = (x, made)
            return made, count
        state = x.state if x.state is not None else {}
        if type(state) is not dict or not all(type(k) is str for k in state):
            raise RefusedPickleError('refused: the state of a {}.{} is {} (expected a dict of '
                                     'attributes)'.format(x.module, x.name, type(state).__name__))
        made = _materialize(x.module, x.name, None, False)
        self.objects[id(x)] = (x, made)
        state, count = self.container(state, dict, depth + 1)
        if isinstance(made, CheckpointData) or not hasattr(type(made), '__setstate__'):
            made.__dict__.update(state)
        else:               # the real class's own (e.g. HistoryBuffer's), given the checked state
            made.__setstate__(state)
        return made, count


def _torch_value_types(builder):
    torch = getattr(builder, 'torch', None)
    if torch is None:
        from .tensor_builder import NumpyDtype
        return frozenset([NumpyDtype])
    return frozenset([torch.Size, torch.device, torch.dtype])


class CheckpointData(object):
    """A data class of a checkpoint's meta whose module is not imported here (``HistoryBuffer``...): its
    attributes as the file gave them."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)

    def __repr__(self):
        return '{}({})'.format(type(self).__name__, ', '.join('{}={!r}'.format(k, v) for k, v in
                                                              sorted(self.__dict__.items())))


class CheckpointDataDict(dict):
    """A dict-like data class of a checkpoint (``ConfigDict``) whose module is not imported here."""


_DATA_TYPES = {}


def _data_type(name, is_dict):
    """The data class standing for ``name`` (kept in this module, so a loaded checkpoint pickles again)."""
    key = (name, is_dict)
    if key not in _DATA_TYPES:
        qualname = '_data_{}_{}'.format('dict' if is_dict else 'object', name)
        cls = type(name, (CheckpointDataDict if is_dict else CheckpointData,), {'__module__': __name__})
        cls.__qualname__ = qualname
        globals()[qualname] = cls
        _DATA_TYPES[key] = cls
    return _DATA_TYPES[key]


def _materialize(module, name, items, is_dict):
    """The real class when its module is already imported (never imported here), else the data class; a dict
    class holds ``items``, an object is made empty (its state is set by the caller)."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    if isinstance(cls, type) and issubclass(cls, dict) == is_dict:
        return cls(items) if is_dict else cls.__new__(cls)
    cls = _data_type(name, is_dict)
    return cls(items) if is_dict else cls()
