"""The object pickle of a torch checkpoint, unpickled by names: tensors, storages and parameters rebuilt from
checked parts, numpy and builtins as :mod:`safe_pickle` rebuilds them, and the plain data that mmcv 1.x and
mmengine runners write into ``meta``/``message_hub``; any other global is refused naming it and the byte
where the pickle met it.

What each allowed name gives (nothing named by the file is imported or called with the file's values):

* a storage (the persistent id ``('storage', <torch.XStorage>, key, location, numel[, view])``): its record
  is read once per key, after checking that ``numel`` x item size is exactly the record's size;
* ``torch._utils._rebuild_tensor[_v2|_v3]``, ``_rebuild_parameter[_with_state]``,
  ``torch._tensor._rebuild_from_type[_v2]`` (plain Tensor/Parameter only): a tensor over its storage,
  size/stride/offset checked to stay inside it, no backward hooks, no other state;
* ``torch.Size``, ``torch.device``, torch dtypes (``torch.float32``...): the value, from plain arguments;
* ``HistoryBuffer`` (mmengine) and ``ConfigDict`` (mmcv, mmengine, addict's ``Dict``): a :class:`DataObject`
  that :mod:`safe_checkpoint` turns into the real class only when its module is already imported, else
  into a data class of the same name (no module is imported to load a checkpoint).

``builder`` (:mod:`safe_checkpoint`) makes the tensors: with torch, real tensors; without, numpy arrays.
"""
import collections

from .safe_numpy import RefusedPickleError, short_repr
from .safe_pickle import ALLOWED as PICKLE_ALLOWED, SafeUnpickler

#: torch's storage classes (``torch.FloatStorage``...) -> the torch dtype name of their elements
STORAGE_DTYPES = {
    'DoubleStorage': 'float64', 'FloatStorage': 'float32', 'HalfStorage': 'float16', 'BFloat16Storage': 'bfloat16',
    'LongStorage': 'int64', 'IntStorage': 'int32', 'ShortStorage': 'int16', 'CharStorage': 'int8',
    'ByteStorage': 'uint8', 'BoolStorage': 'bool', 'ComplexDoubleStorage': 'complex128',
    'ComplexFloatStorage': 'complex64', 'UntypedStorage': 'uint8'}
#: torch dtype names a pickle may name as ``torch.<name>``
DTYPE_NAMES = frozenset(['float64', 'float32', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8',
                         'bool', 'complex128', 'complex64', 'double', 'float', 'half', 'long', 'int', 'short',
                         'uint16', 'uint32', 'uint64', 'float8_e4m3fn', 'float8_e5m2', 'cfloat', 'cdouble'])
_TORCH_REBUILD = ('_rebuild_tensor', '_rebuild_tensor_v2', '_rebuild_tensor_v3', '_rebuild_parameter',
                  '_rebuild_parameter_with_state')
#: data classes of the runners' meta: (module, name) -> the kind of stand-in
DATA_CLASSES = {}
for _module in ('mmengine.logging.history_buffer', 'mmengine.logging'):
    DATA_CLASSES[(_module, 'HistoryBuffer')] = 'object'
for _module in ('mmcv.utils.config', 'mmcv.utils', 'mmcv', 'mmengine.config.config', 'mmengine.config',
                'mmengine'):
    DATA_CLASSES[(_module, 'ConfigDict')] = 'dict'
for _module in ('addict.addict', 'addict'):
    DATA_CLASSES[(_module, 'Dict')] = 'dict'
#: methods a data class's state may hold bound to the object itself (``getattr(obj, name)``): mmengine's
#: HistoryBuffer keeps its statistics methods in its state
DATA_METHODS = {'HistoryBuffer': ('min', 'max', 'current', 'mean')}
MAX_DIMS = 64
OPT_IN = ('trust=True, --trust-checkpoint, KRADAR_TRUST_CHECKPOINT=1 or trust_checkpoint=True in the config')


class DataObject(object):
    """An object of a :data:`DATA_CLASSES` class as the pickle builds it (``cls.__new__`` then its state)."""

    __slots__ = ('module', 'name', 'state')

    def __init__(self, module, name):
        self.module = module
        self.name = name
        self.state = None

    def __setstate__(self, state):
        if self.state is not None:
            raise RefusedPickleError('refused: a {} given a state twice'.format(self.name))
        self.state = state


class DataDict(dict):
    """A dict-like :data:`DATA_CLASSES` object (``ConfigDict``): its items by SETITEMS; addict's own state is
    the dict itself."""

    __slots__ = ('module', 'name', '__weakref__')

    def __setstate__(self, state):
        if state is not self and state is not None:
            if type(state) is not dict and not isinstance(state, DataDict):
                raise RefusedPickleError('refused: the state of a {} is a {}'.format(
                    self.name, type(state).__name__))
            self.update(state)


def _data_class(module, name, kind):
    if kind == 'dict':
        def new(cls, *args):
            # addict's Dict (mmcv's ConfigDict) passes its items as (key, value) pairs to __new__, which
            # ignores them (SETITEMS follows): so here
            if not all(type(a) is tuple and len(a) == 2 for a in args):
                raise RefusedPickleError('refused: {}.{}.__new__{}'.format(module, name, short_repr(args)))
            d = DataDict()
            d.module, d.name = module, name
            return d
    else:
        def new(cls, *args):
            if args:
                raise RefusedPickleError('refused: {}.{}.__new__ with arguments'.format(module, name))
            return DataObject(module, name)

    def call(cls, *args, **kwargs):
        """mmengine's ConfigDict pickles as ``ConfigDict(<dict>)``: a dict class may be called with one dict."""
        if kind != 'dict' or kwargs or len(args) != 1 or not isinstance(args[0], dict):
            raise RefusedPickleError('refused: {}.{}{} (built from one dict only)'.format(
                module, name, short_repr(args)))
        d = new(cls)
        d.update(args[0])
        return d
    return _StandIn(name, (object,), {'__new__': new, '__slots__': (), '_call': call, '_module': module})


class _StandIn(type):
    """The type of a data-class stand-in: NEWOBJ (``cls.__new__``) builds it, a call (REDUCE) is refused."""

    def __call__(cls, *args, **kwargs):
        return cls._call(cls, *args, **kwargs)


def _no_state(self, state):
    raise RefusedPickleError('refused: a state given to a {} (torch checkpoints give none)'.format(
        type(self).__name__))


class StorageRef(object):
    """A storage of the checkpoint: its key, dtype name, element count and the builder's flat tensor."""

    __slots__ = ('key', 'dtype', 'numel', 'flat')
    __setstate__ = _no_state

    def __init__(self, key, dtype, numel, flat):
        self.key = key
        self.dtype = dtype
        self.numel = numel
        self.flat = flat


def _is_int(value):
    return type(value) is int


def _checked_layout(storage, offset, size, stride, where):
    """Refuse a tensor whose size/stride/offset are not plain non-negative integers or reach outside its
    storage."""
    if type(size) not in (tuple, list) or type(stride) not in (tuple, list) or len(size) != len(stride) or \
            len(size) > MAX_DIMS or not _is_int(offset) or offset < 0:
        raise RefusedPickleError('refused: a tensor with size {}, stride {}, offset {}'.format(
            short_repr(size), short_repr(stride), short_repr(offset)))
    if not all(_is_int(d) and d >= 0 for d in size) or not all(_is_int(s) and s >= 0 for s in stride):
        raise RefusedPickleError('refused: a tensor with size {} and stride {}'.format(
            short_repr(size), short_repr(stride)))
    if all(size):
        extent = offset + sum((d - 1) * s for d, s in zip(size, stride)) + 1
        if extent > storage.numel:
            raise RefusedPickleError('refused: a tensor of size {}, stride {}, offset {} reaches element {} of '
                                     'storage {} ({}), which holds {}'.format(
                                         tuple(size), tuple(stride), offset, extent, storage.key, where,
                                         storage.numel))
    return tuple(size), tuple(stride)


def _no_hooks(hooks):
    if hooks is not None and not ((type(hooks) is dict or type(hooks) is collections.OrderedDict) and not hooks):
        raise RefusedPickleError('refused: a tensor with backward hooks ({})'.format(short_repr(hooks)))


class CheckpointUnpickler(SafeUnpickler):
    """The unpickler of a checkpoint's object pickle (see the module docstring). ``archive``: the
    :mod:`torch_archive` container; ``builder``: makes flat storages and tensors; ``where``: how errors name
    the pickle. Call :func:`safe_pickle.settle`-like settling (``safe_checkpoint``) on what it loads."""

    def __init__(self, f, archive, builder, where, limits=None):
        super(CheckpointUnpickler, self).__init__(f, limits)
        self.f = f
        self.archive = archive
        self.builder = builder
        self.where = where
        self.storages = {}
        self.declared = {}          # key -> (element count, item size), for the legacy records
        self.pending = []           # legacy: tensors built after the records are located
        self.refused = None

    def _position(self):
        try:
            return self.f.tell()
        except (AttributeError, ValueError, OSError):
            return None

    def find_class(self, module, name):
        if module == 'torch._utils' and name in _TORCH_REBUILD:
            return getattr(self, name)
        if module == 'torch._tensor' and name in ('_rebuild_from_type', '_rebuild_from_type_v2'):
            return self._rebuild_from_type
        if module in ('torch', 'torch.cuda') and name in STORAGE_DTYPES:
            return _StorageType(name)
        if module == 'torch' and name in DTYPE_NAMES:
            return self.builder.dtype(name)
        if module == 'torch' and name == 'Size':
            return self._size
        if module == 'torch' and name == 'device':
            return self._device
        if module in ('torch', 'torch._tensor') and name == 'Tensor':
            return _TENSOR
        if module in ('torch.nn.parameter', 'torch.nn') and name == 'Parameter':
            return _PARAMETER
        if module in ('builtins', '__builtin__') and name == 'getattr':
            return self._getattr
        if module == 'collections' and name == 'Counter':
            return _counter
        kind = DATA_CLASSES.get((module, name))
        if kind is not None:
            return _data_class(module, name, kind)
        if (module, name) in PICKLE_ALLOWED or module == '__builtin__':
            try:
                return super(CheckpointUnpickler, self).find_class(module, name)
            except RefusedPickleError:
                pass
        at = self._position()
        self.refused = '{}.{}'.format(module, name)
        raise RefusedPickleError(
            'refused to load the global {}.{} (met in {}{}): a checkpoint may hold only tensors, numpy arrays, '
            'containers and the plain data mmcv/mmengine runners write; nothing it names is imported or run. If '
            'you trust this file, load it with {} (full unpickling runs any code the file holds)'.format(
                module, name, self.where, ' near byte {}'.format(at) if at is not None else '', OPT_IN))

    # ---------------------------------------------------------------------------------------- storages
    def persistent_load(self, pid):
        if type(pid) is not tuple or not pid or pid[0] != 'storage':
            raise RefusedPickleError('refused: a persistent id {} (met in {}): torch checkpoints reference only '
                                     'storages'.format(short_repr(pid), self.where))
        legacy = self.archive.kind == 'legacy'
        if len(pid) != (6 if legacy else 5):
            raise RefusedPickleError('refused: a storage id of {} fields: {}'.format(len(pid), short_repr(pid)))
        storage_type, key, location, numel = pid[1:5]
        if type(storage_type) is not _StorageType or type(location) is not str or len(location) > 64 or \
                not _is_int(numel) or numel < 0 or type(key) is not str:
            raise RefusedPickleError('refused: the storage id {}'.format(short_repr(pid)))
        from .torch_archive import valid_key
        if not valid_key(key):
            raise RefusedPickleError('refused: the storage key {}'.format(short_repr(key)))
        if legacy and pid[5] is not None:
            return self._legacy_view(pid)
        dtype = storage_type.dtype
        itemsize = self.builder.itemsize(dtype)
        hit = self.storages.get(key)
        if hit is not None:
            if hit.numel * self.builder.itemsize(hit.dtype) != numel * itemsize:
                raise RefusedPickleError('refused: storage {} declared with {} and with {} bytes'.format(
                    key, hit.numel * self.builder.itemsize(hit.dtype), numel * itemsize))
            if hit.dtype == dtype:
                return hit
            return StorageRef(key, dtype, numel, self.builder.retype(hit.flat, dtype) if hit.flat is not None else
                              None)
        nbytes = numel * itemsize
        if legacy:
            ref = StorageRef(key, dtype, numel, None)
            self.declared[key] = (numel, itemsize)
        else:
            record = self.archive.record_size(key)
            if record != nbytes:
                raise RefusedPickleError(
                    'refused: storage {} is declared as {} {} elements ({} bytes) but its record {} holds {} '
                    'bytes'.format(key, numel, dtype, nbytes, self.archive.where(key), record))
            ref = StorageRef(key, dtype, numel, self.builder.storage(self.archive, key, dtype, numel, nbytes,
                                                                     location))
        self.storages[key] = ref
        return ref

    def _legacy_view(self, pid):
        raise RefusedPickleError('refused: a legacy storage view {} (torch < 1.0 wrote them; re-save the file '
                                 'with a recent torch)'.format(short_repr(pid)))

    def finish(self):
        """After the pickle: read the legacy records and build the tensors that waited for them."""
        if self.archive.kind != 'legacy':
            return
        located = self.archive.finish(self.declared)
        for key, ref in self.storages.items():
            ref.flat = self.builder.storage(self.archive, key, ref.dtype, ref.numel, located[key][1], None)
        for ref, build in self.pending:
            ref.value = build()

    # ---------------------------------------------------------------------------------------- tensors
    def _tensor(self, storage, offset, size, stride, requires_grad=False, hooks=None, dtype=None):
        if type(storage) is not StorageRef:
            raise RefusedPickleError('refused: a tensor over {} (expected a storage of the file)'.format(
                short_repr(storage)))
        if requires_grad not in (True, False):
            raise RefusedPickleError('refused: requires_grad={}'.format(short_repr(requires_grad)))
        _no_hooks(hooks)
        if dtype is not None and dtype is not self.builder.dtype(storage.dtype):
            if not self.builder.is_dtype(dtype):
                raise RefusedPickleError('refused: a tensor of dtype {}'.format(short_repr(dtype)))
            storage = self.persistent_retype(storage, dtype)
        size, stride = _checked_layout(storage, offset, size, stride, self.where)
        ref = TensorRef()
        if storage.flat is None:            # legacy: the records come after the pickle
            self.pending.append((ref, lambda: self.builder.tensor(storage, offset, size, stride, requires_grad)))
        else:
            ref.value = self.builder.tensor(storage, offset, size, stride, requires_grad)
        return ref

    def persistent_retype(self, storage, dtype):
        name = self.builder.dtype_name(dtype)
        itemsize = self.builder.itemsize(name)
        nbytes = storage.numel * self.builder.itemsize(storage.dtype)
        if nbytes % itemsize:
            raise RefusedPickleError('refused: storage {} of {} bytes viewed as {}'.format(storage.key, nbytes, name))
        flat = self.builder.retype(storage.flat, name) if storage.flat is not None else None
        return StorageRef(storage.key, name, nbytes // itemsize, flat)

    def _rebuild_tensor(self, storage=None, offset=None, size=None, stride=None, *rest):
        if rest:
            raise RefusedPickleError('refused: _rebuild_tensor with {} arguments'.format(4 + len(rest)))
        return self._tensor(storage, offset, size, stride)

    def _rebuild_tensor_v2(self, storage=None, offset=None, size=None, stride=None, requires_grad=False,
                           hooks=None, metadata=None, *rest):
        if rest or metadata:
            raise RefusedPickleError('refused: _rebuild_tensor_v2 with tensor metadata {}'.format(
                short_repr(metadata)))
        return self._tensor(storage, offset, size, stride, requires_grad, hooks)

    def _rebuild_tensor_v3(self, storage=None, offset=None, size=None, stride=None, requires_grad=False,
                           hooks=None, dtype=None, metadata=None, *rest):
        if rest or metadata:
            raise RefusedPickleError('refused: _rebuild_tensor_v3 with tensor metadata {}'.format(
                short_repr(metadata)))
        return self._tensor(storage, offset, size, stride, requires_grad, hooks, dtype)

    def _rebuild_parameter(self, data=None, requires_grad=True, hooks=None, *rest):
        if rest:
            raise RefusedPickleError('refused: _rebuild_parameter with {} arguments'.format(3 + len(rest)))
        return self._parameter(data, requires_grad, hooks, None)

    def _rebuild_parameter_with_state(self, data=None, requires_grad=True, hooks=None, state=None, *rest):
        if rest:
            raise RefusedPickleError('refused: _rebuild_parameter_with_state with {} arguments'.format(
                4 + len(rest)))
        return self._parameter(data, requires_grad, hooks, state)

    def _parameter(self, data, requires_grad, hooks, state):
        _no_hooks(hooks)
        if requires_grad not in (True, False):
            raise RefusedPickleError('refused: requires_grad={}'.format(short_repr(requires_grad)))
        if state:
            raise RefusedPickleError('refused: a parameter with attributes {}'.format(short_repr(state)))
        if type(data) is not TensorRef:
            raise RefusedPickleError('refused: a parameter of {}'.format(short_repr(data)))
        ref = TensorRef()
        if data.value is None:
            self.pending.append((ref, lambda: self.builder.parameter(data.value, requires_grad)))
        else:
            ref.value = self.builder.parameter(data.value, requires_grad)
        return ref

    def _rebuild_from_type(self, func=None, new_type=None, args=None, state=None, *rest):
        if rest or new_type not in (_TENSOR, _PARAMETER) or type(args) is not tuple or state:
            raise RefusedPickleError('refused: _rebuild_from_type({}, {}, ..., state={})'.format(
                short_repr(func), short_repr(new_type), short_repr(state)))
        if getattr(func, '__self__', None) is not self or getattr(func, '__func__', None) not in (
                CheckpointUnpickler._rebuild_tensor_v2, CheckpointUnpickler._rebuild_tensor,
                CheckpointUnpickler._rebuild_tensor_v3):
            raise RefusedPickleError('refused: _rebuild_from_type of {}'.format(short_repr(func)))
        tensor = func(*args)
        return self._parameter(tensor, True, None, None) if new_type is _PARAMETER else tensor

    # ---------------------------------------------------------------------------------------- values
    def _getattr(self, obj=None, name=None, *rest):
        if rest or type(obj) is not _StandIn or name not in DATA_METHODS.get(obj.__name__, ()):
            raise RefusedPickleError('refused: getattr{} (checkpoints name only the statistics methods of '
                                     'mmengine\'s HistoryBuffer)'.format(short_repr((obj, name) + rest)))
        return ClassAttribute(obj._module, obj.__name__, name)

    def _size(self, dims=(), *rest):
        if rest or type(dims) not in (tuple, list) or len(dims) > MAX_DIMS or \
                not all(_is_int(d) and d >= 0 for d in dims):
            raise RefusedPickleError('refused: torch.Size{}'.format(short_repr((dims,) + rest)))
        return self.builder.size(tuple(dims))

    def _device(self, kind=None, index=None, *rest):
        if rest or type(kind) is not str or len(kind) > 32 or not (index is None or _is_int(index)):
            raise RefusedPickleError('refused: torch.device{}'.format(short_repr((kind, index) + rest)))
        return self.builder.device(kind, index)


class _StorageType(object):
    """``torch.<X>Storage`` named in a storage id: only its element dtype is kept."""

    __slots__ = ('dtype',)
    __setstate__ = _no_state

    def __init__(self, name):
        self.dtype = STORAGE_DTYPES[name]

    def __call__(self, *args, **kwargs):
        raise RefusedPickleError('refused: a torch storage class called (checkpoints name it in storage ids only)')


class ClassAttribute(object):
    """``getattr(<data class>, name)`` of an allowed method (its function): the real class's when that class
    is imported, else the name."""

    __slots__ = ('module', 'cls', 'name')
    __setstate__ = _no_state

    def __init__(self, module, cls, name):
        self.module = module
        self.cls = cls
        self.name = name


def _counter(mapping=None, *rest):
    if rest or not (mapping is None or type(mapping) is dict):
        raise RefusedPickleError('refused: collections.Counter{} (built from a dict only)'.format(
            short_repr((mapping,) + rest)))
    return collections.Counter(mapping or {})


class TensorRef(object):
    """A tensor of the checkpoint while the pickle loads (``value``; a legacy checkpoint's is built after the
    object pickle, when its record is read): no opcode of the file reaches the tensor itself (a BUILD would call
    ``Tensor.__setstate__`` with the file's sizes)."""

    __slots__ = ('value',)

    def __init__(self):
        self.value = None

    def __setstate__(self, state):
        raise RefusedPickleError('refused: a state given to a tensor (torch checkpoints give none)')


_TENSOR = object()
_PARAMETER = object()
