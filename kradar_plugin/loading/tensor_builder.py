"""What the checkpoint unpickler's storages and tensors become: torch tensors (:class:`TorchBuilder`, torch
imported only here, when a checkpoint is loaded) or numpy arrays (:class:`NumpyBuilder`: no torch needed,
e.g. the doctor reading a checkpoint's ``meta``; ``read=False`` reads no storage at all).

A storage's record is read once, straight from the file into one new buffer (numpy's ``empty`` + the raw
file's ``readinto``); a torch tensor is ``torch.from_numpy`` of it (no copy), viewed as the storage's dtype
where numpy has no such type (bfloat16, float8, unsigned ints), and each tensor is set on that storage with
its checked size, stride and offset, as torch's own ``_rebuild_tensor`` does.
"""
import numpy as np

#: torch dtype name -> (numpy dtype of the same bytes, item size, canonical name)
_DTYPES = {
    'float64': ('f8', 8), 'float32': ('f4', 4), 'float16': ('f2', 2), 'bfloat16': ('i2', 2),
    'int64': ('i8', 8), 'int32': ('i4', 4), 'int16': ('i2', 2), 'int8': ('i1', 1), 'uint8': ('u1', 1),
    'bool': ('?', 1), 'complex128': ('c16', 16), 'complex64': ('c8', 8), 'uint16': ('i2', 2),
    'uint32': ('i4', 4), 'uint64': ('i8', 8), 'float8_e4m3fn': ('u1', 1), 'float8_e5m2': ('u1', 1)}
ALIASES = {'double': 'float64', 'float': 'float32', 'half': 'float16', 'long': 'int64', 'int': 'int32',
           'short': 'int16', 'cfloat': 'complex64', 'cdouble': 'complex128'}
#: dtypes numpy holds as themselves (the others: raw bytes of the same size, viewed by torch)
_NUMPY_NATIVE = ('float64', 'float32', 'float16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool',
                 'complex128', 'complex64')


def canonical(name):
    return ALIASES.get(name, name)


class NumpyDtype(object):
    """A torch dtype where torch is absent: its canonical name."""

    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return 'torch.' + self.name


class TensorInfo(object):
    """A tensor whose storage was not read (``NumpyBuilder(read=False)``): its shape and dtype name."""

    __slots__ = ('shape', 'dtype')

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype

    def __repr__(self):
        return 'TensorInfo(shape={}, dtype={})'.format(self.shape, self.dtype)


class NumpyBuilder(object):
    """Storages as numpy arrays, tensors as read-only strided views of them (``read``: else TensorInfo)."""

    def __init__(self, read=True):
        self.read = read
        self._dtypes = {}
        self.made = set()           # ids of the arrays that are tensors (counted as one element when settled)

    def dtype(self, name):
        name = canonical(name)
        if name not in self._dtypes:
            self._dtypes[name] = NumpyDtype(name)
        return self._dtypes[name]

    def is_dtype(self, value):
        return type(value) is NumpyDtype

    def dtype_name(self, value):
        return value.name

    @staticmethod
    def itemsize(name):
        return _DTYPES[canonical(name)][1]

    def storage(self, archive, key, dtype, numel, nbytes, location):
        if not self.read:
            return _SKIPPED
        buf = np.empty(nbytes, dtype=np.uint8)
        archive.read(key, buf)
        return self.retype(buf, dtype)

    def retype(self, flat, name):
        if flat is _SKIPPED:
            return flat
        code = _DTYPES[canonical(name)][0] if canonical(name) in _NUMPY_NATIVE else 'u{}'.format(
            self.itemsize(name))
        return flat.view(np.uint8).view(np.dtype(code))

    def tensor(self, storage, offset, size, stride, requires_grad):
        if storage.flat is _SKIPPED:
            return TensorInfo(size, storage.dtype)
        flat = storage.flat
        item = flat.dtype.itemsize
        out = np.lib.stride_tricks.as_strided(flat[offset:], shape=size, strides=[s * item for s in stride])
        out.flags.writeable = False
        self.made.add(id(out))
        return out

    def parameter(self, tensor, requires_grad):
        return tensor

    def is_tensor(self, value):
        return type(value) is TensorInfo or (type(value) is np.ndarray and id(value) in self.made)

    def size(self, dims):
        return dims

    def device(self, kind, index):
        return kind if index is None else '{}:{}'.format(kind, index)


_SKIPPED = object()


class TorchBuilder(object):
    """Storages and tensors as torch makes them; ``map_location`` as ``torch.load`` takes it (None: where
    saved; a device or its name; {saved: target}; a function (storage, location) -> tensor)."""

    def __init__(self, map_location='cpu'):
        import torch
        self.torch = torch
        self.map_location = map_location
        self._targets = {}
        self._tensor_types = (torch.Tensor,)
        self.has_untyped = hasattr(torch.Tensor, 'untyped_storage')

    def dtype(self, name):
        value = getattr(self.torch, canonical(name), None)
        if not isinstance(value, self.torch.dtype):
            from .safe_numpy import RefusedPickleError
            raise RefusedPickleError('refused: torch.{} (no such dtype in torch {})'.format(
                name, self.torch.__version__))
        return value

    def is_dtype(self, value):
        return isinstance(value, self.torch.dtype)

    def dtype_name(self, value):
        return str(value).replace('torch.', '')

    itemsize = staticmethod(NumpyBuilder.itemsize)

    def storage(self, archive, key, dtype, numel, nbytes, location):
        buf = np.empty(nbytes, dtype=np.uint8)
        archive.read(key, buf)
        flat = self.retype(buf, dtype)
        target = self._target(location)
        if callable(target):
            moved = target(flat, location)
            return moved if isinstance(moved, self.torch.Tensor) else flat
        return flat if target is None else flat.to(target)

    def retype(self, flat, name):
        torch = self.torch
        name = canonical(name)
        if isinstance(flat, torch.Tensor):       # another dtype's view of a storage already read
            own = self.dtype_name(flat.dtype)
            if own not in _NUMPY_NATIVE:
                flat = flat.view(getattr(torch, {1: 'uint8', 2: 'int16', 4: 'int32', 8: 'int64'}[
                    self.itemsize(own)]))
            flat = flat.detach().cpu().numpy()
        code = _DTYPES[name][0]
        out = torch.from_numpy(flat.view(np.uint8).view(np.dtype(code)))
        return out if name in _NUMPY_NATIVE else out.view(self.dtype(name))

    def _target(self, location):
        """None (stay on the CPU), a device, or the map function, for a storage saved at ``location``."""
        if location in self._targets:
            return self._targets[location]
        ml = self.map_location
        torch = self.torch
        if callable(ml) and not isinstance(ml, (str, torch.device)):
            target = ml
        else:
            if isinstance(ml, dict):
                ml = ml.get(location, location)
            target = location if ml is None or location is None else ml
            target = torch.device(target) if target is not None else None
            if target is not None and target.type == 'cpu':
                target = None
            if target is not None and target.type == 'cuda' and not torch.cuda.is_available():
                raise RuntimeError('a storage saved on {} and no CUDA here: pass map_location=\'cpu\''.format(
                    location))
        self._targets[location] = target
        return target

    def tensor(self, storage, offset, size, stride, requires_grad):
        flat = storage.flat
        out = flat.new_empty(0)
        out.set_(flat.untyped_storage() if self.has_untyped else flat.storage(), offset, size, stride)
        if requires_grad:
            out.requires_grad_(True)
        return out

    def parameter(self, tensor, requires_grad):
        return self.torch.nn.Parameter(tensor, requires_grad)

    def is_tensor(self, value):
        return isinstance(value, self.torch.Tensor)

    def size(self, dims):
        return self.torch.Size(dims)

    def device(self, kind, index):
        try:
            return self.torch.device(kind) if index is None else self.torch.device(kind, index)
        except (RuntimeError, ValueError, TypeError) as exc:
            from .safe_numpy import RefusedPickleError
            raise RefusedPickleError('refused: torch.device({!r}, {!r}) ({})'.format(kind, index, exc))
