"""The numpy half of :mod:`safe_pickle`: numpy arrays, scalars and dtypes of a pickle rebuilt from checked parts.

The names a pickle references for numpy objects are given as stand-ins that run no numpy code on the file's
values: ``numpy.dtype`` is a :class:`_Dtype` description; ``_reconstruct`` (numpy's own form), ``_frombuffer``
(protocol 5) and ``numpy.ndarray`` through NEWOBJ (the portable form of :mod:`kradar_plugin.files.portable_pickle`:
``ndarray.__new__(ndarray, (0,), 'b')`` then BUILD) each give an empty :class:`_Array` that receives numpy's
state; :func:`_rebuild` then checks every state (shape x itemsize = data, no strides, no views, plain dtypes)
and builds the arrays. ``scalar`` (numpy's form) and ``_operator.getitem(<0-d array>, ())`` (the portable form)
give numpy scalars through the same checks. Calling ``numpy.ndarray`` (REDUCE) is refused.
"""
import pickle
import re

import numpy as np

#: integers longer than this are refused (about 4,300 decimal digits, Python 3.11's default conversion limit)
MAX_INT_BITS = 14300

#: the widest fixed-width string dtype (bytes per item)
MAX_ITEMSIZE = 1 << 20

_DTYPE_ARG = re.compile(r'^([biufcSUO])([0-9]{1,8})$')
_FIXED_SIZES = {'b': (1,), 'i': (1, 2, 4, 8), 'u': (1, 2, 4, 8), 'f': (2, 4, 8), 'c': (8, 16), 'O': (4, 8)}

_NUMPY_SCALAR = np.generic


class RefusedPickleError(pickle.UnpicklingError):
    """The pickle references a class outside :data:`ALLOWED`, or gives one of them what K-Radar files never
    hold (a structured dtype, a buffer of the wrong length, a length to allocate, too many elements...)."""


def _refuse(message):
    raise RefusedPickleError('refused: ' + message)


def _is_int(value):
    return type(value) is int or isinstance(value, np.integer)


class _NdarrayMeta(type):
    """The type of the stand-in for ``numpy.ndarray``: NEWOBJ (``cls.__new__``) is the portable form; a call
    (REDUCE) is refused, as numpy pickles never call it."""

    def __call__(cls, *args, **kwargs):
        _refuse('numpy.ndarray called directly (numpy pickles name it only for _reconstruct or NEWOBJ)')


_EMPTY_ARGS = (((0,), 'b'), ((0,), b'b'))


def _ndarray_type(arrays):
    """The stand-in for ``numpy.ndarray`` of one load: ``__new__`` accepts only ``((0,), 'b')`` (what
    ``_reconstruct`` passes to numpy) and gives an empty :class:`_Array`, whose state comes by BUILD."""
    append = arrays.append

    def __new__(cls, *args, **kwargs):
        if kwargs or args not in _EMPTY_ARGS:
            _refuse('numpy.ndarray.__new__{!r}: portable pickles write ndarray.__new__(ndarray, (0,), \'b\') '
                    'and give the state by BUILD'.format(short_repr(args)))
        array = _Array()
        append(array)
        return array
    return _NdarrayMeta('ndarray', (object,), {'__new__': __new__, '__slots__': ()})

class _Dtype(object):
    """A dtype as the file describes it (``numpy.dtype(arg, align, copy)`` then its state); :meth:`dtype`
    builds the numpy dtype from the checked kind, size and byte order."""

    __hash__ = None

    def __init__(self, arg, align=False, copy=True, *rest):
        if rest or type(arg) not in (str, bytes):
            _refuse('numpy.dtype{!r}: expected a type code such as \'f8\''.format((arg, align, copy) + rest))
        arg = arg.decode('latin-1') if type(arg) is bytes else arg
        match = _DTYPE_ARG.match(arg)
        if match is None:
            _refuse('numpy.dtype({!r}): only bool, integer, float, complex, fixed-width string and object '
                    'dtypes'.format(arg))
        self.kind, self.size = match.group(1), int(match.group(2))
        if self.kind in _FIXED_SIZES and self.size not in _FIXED_SIZES[self.kind]:
            _refuse('numpy.dtype({!r}): no such dtype'.format(arg))
        self.itemsize = self.size * 4 if self.kind == 'U' else self.size     # 'U5' holds 5 characters
        if self.kind in 'SU' and not 0 < self.itemsize <= MAX_ITEMSIZE:
            _refuse('numpy.dtype({!r}): item size out of range'.format(arg))
        self.order = '|'
        self.built = False
        self._dtype = None
        self._info = None

    def __setstate__(self, state):
        if self.built:
            _refuse('a dtype given a state twice')
        if type(state) is not tuple or len(state) not in (8, 9) or state[0] not in (3, 4):
            _refuse('numpy dtype state {!r}: expected numpy\'s version 3 state'.format(short_repr(state)))
        order, subarray, names, fields, elsize, alignment, flags = state[1:8]
        metadata = state[8] if len(state) == 9 else None
        if subarray is not None or names is not None or fields is not None or metadata:
            _refuse('a structured, subarray or metadata dtype (K-Radar files hold plain dtypes)')
        if order not in ('<', '>', '|', '=') or not all(_is_int(v) for v in (elsize, alignment, flags)):
            _refuse('numpy dtype state {!r}'.format(short_repr(state)))
        if self.kind in 'SU' and elsize != self.itemsize:
            _refuse('numpy dtype state: item size {} for {}{}'.format(elsize, self.kind, self.size))
        self.order = order
        self.built = True
        self._dtype = None
        self._info = None

    def dtype(self):
        if self._dtype is None:
            dtype = np.dtype('O') if self.kind == 'O' else np.dtype('{}{}'.format(self.kind, self.size))
            if self.order in '<>' and dtype.byteorder not in ('|',):
                dtype = dtype.newbyteorder(self.order)
            self._dtype = dtype
        return self._dtype

    def info(self):
        """(numpy dtype, item size (None for objects), whether its byte order is not native), cached."""
        if self._info is None:
            dt = self.dtype()
            self._info = dt, None if dt.kind == 'O' else dt.itemsize, not dt.isnative
        return self._info


class _Array(list):
    """An array as the file describes it. ``_reconstruct`` makes it empty; the file's ``BUILD`` appends its
    state (``list.append``: no Python call per array); :meth:`SafeUnpickler.load` then checks every state and
    rebuilds all arrays at once (:func:`_rebuild`), after which it holds ``[ndarray, element count]``. Never
    hashable, never a list to anything but this module (the settling walk replaces it by its ndarray)."""

    __slots__ = ()
    __hash__ = None
    __setstate__ = list.append


def _reconstructor(arrays, ndarray):
    """``numpy.core.multiarray._reconstruct`` as :class:`SafeUnpickler` gives it: only numpy's own call
    ``_reconstruct(ndarray, (0,), b'b')``, which makes an empty :class:`_Array` (its state comes by BUILD)."""
    append = arrays.append
    expected = ((ndarray, (0,), b'b'), (ndarray, (0,), 'b'))      # Python 3, Python 2

    def _reconstruct(*args):
        if args not in expected:
            _refuse('numpy _reconstruct{!r}: numpy pickles write _reconstruct(ndarray, (0,), b\'b\')'.format(
                short_repr(args)))
        array = _Array()
        append(array)
        return array
    return _reconstruct


def _frombufferer(arrays):
    """``numpy.core.numeric._frombuffer`` (protocol 5): an :class:`_Array` with the state its arguments give."""
    def _frombuffer(buf=None, dtype=None, shape=None, order=None, *rest):
        if rest or order not in ('C', 'F'):
            _refuse('numpy _frombuffer: order {!r}'.format(short_repr(order)))
        array = _Array()
        array.append((shape, dtype, order == 'F', buf))
        arrays.append(array)
        return array
    return _frombuffer


def _scalar(dtype=None, data=None, *rest):
    if type(dtype) is not _Dtype or rest:
        _refuse('numpy scalar{!r}: expected (dtype, data)'.format(short_repr((dtype, data) + rest)))
    if dtype.kind == 'O':
        return _plain_value(data, 'an object scalar')
    data = _buffer(data)
    if len(data) != dtype.dtype().itemsize:
        _refuse('numpy scalar of {}: {} bytes of data'.format(dtype.dtype(), len(data)))
    return np.frombuffer(data, dtype=dtype.dtype(), count=1)[0]


def _indexer(arrays, limit):
    """``_operator.getitem`` as :class:`SafeUnpickler` gives it: only ``getitem(<0-d array>, ())`` of the array
    just built (the portable form of a numpy scalar), rebuilt at once with the checks of every array."""
    def getitem(array=None, index=None, *rest):
        if type(array) is not _Array or type(index) is not tuple or index or rest:
            _refuse('operator.getitem{!r}: pickles index only a 0-d numpy array, with ()'.format(
                short_repr((array, index) + rest)))
        if not arrays or arrays[-1] is not array:
            _refuse('operator.getitem of an array other than the one just built')
        _rebuild([arrays.pop()], limit)
        value = array[0]
        if value.shape != ():
            _refuse('operator.getitem(array of shape {}, ()): a numpy scalar comes from a 0-d array'.format(
                value.shape))
        return value[()]
    return getitem


#: what an object array (or an object scalar) may hold: plain values, no containers, no arrays
_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _plain_value(value, where):
    t = type(value)
    if t not in _PLAIN and not isinstance(value, _NUMPY_SCALAR):
        _refuse('{} holding {}: object arrays may hold only None, bool, int, float, complex, str and bytes '
                'values'.format(where, _described(value)))
    if t is int and value.bit_length() > MAX_INT_BITS:
        _refuse('an integer of {} bits'.format(value.bit_length()))
    return value


_PAD = [b'\x00' * k for k in range(8)]


def _shape_size(shape, limit, cache):
    """(checked shape, element count) of an array state's shape (``cache``: shapes seen before)."""
    if type(shape) is not tuple or len(shape) > 32:
        _refuse('numpy array shape {!r}'.format(short_repr(shape)))
    n = 1
    for d in shape:
        if type(d) is not int or d < 0:
            _refuse('numpy array shape {!r}'.format(short_repr(shape)))
        n *= d
        if d > limit or n > limit:
            _refuse('an array of shape {} holds more than the limit of {:,} elements per array '
                    '(--max-array-elements raises it)'.format(shape, limit))
    cache[shape] = shape, n
    return shape, n


def _rebuild(arrays, limit):
    """Check the state of every :class:`_Array` and rebuild all of them: the data of all non-object arrays is
    copied once into one buffer (each array's bytes at an 8-byte-aligned offset) and each array is an
    ``ndarray`` of its checked shape and dtype over its own bytes of that buffer; an object array is made
    from its list of plain values. Each _Array then holds ``[ndarray, element count]``."""
    shapes = {}
    pending = []
    chunks = []
    offset = 0
    for array in arrays:
        if len(array) != 1:
            _refuse('an array without its state' if not array else 'an array given a state twice')
        state = array[0]
        if type(state) is tuple and len(state) == 5 and state[0] == 1:
            _, shape, dtype, fortran, data = state
        elif type(state) is tuple and len(state) == 4:
            shape, dtype, fortran, data = state
        else:
            _refuse('numpy array state {!r}: expected (1, shape, dtype, is_fortran, data)'.format(short_repr(state)))
        if type(dtype) is not _Dtype:
            _refuse('numpy array with dtype {!r}: expected numpy.dtype(...)'.format(short_repr(dtype)))
        dt, itemsize, swapped = dtype._info or dtype.info()
        if fortran is not False and fortran is not True and (type(fortran) is not int or fortran not in (0, 1)):
            _refuse('numpy array state: is_fortran {!r}'.format(short_repr(fortran)))
        try:
            hit = shapes.get(shape)
        except TypeError:           # an unhashable shape: refused by _shape_size
            hit = None
        shape, n = hit or _shape_size(shape, limit, shapes)
        if itemsize is None:
            array[0] = _object_array(data, shape, n, 'F' if fortran else 'C')
            array.append(n + sum(1 + len(v) // 8 if type(v) in (str, bytes) else 1 for v in data))
            continue
        if type(data) is not bytes:
            data = _buffer(data)
        size = len(data)
        if size != n * itemsize:
            _refuse('an array of shape {} and dtype {} with {} bytes of data ({} expected)'.format(
                shape, dt, size, n * itemsize))
        pending.append((array, shape, dt, offset, fortran, n, swapped))
        chunks.append(data)
        pad = -size & 7
        if pad:
            chunks.append(_PAD[pad])
        offset += size + pad
    buf = bytearray().join(chunks)        # this module's own copy: the arrays are writable views of it
    del chunks[:]
    ndarray = np.ndarray
    for array, shape, dt, offset, fortran, n, swapped in pending:
        if not n:
            out = np.zeros(shape, dtype=dt)
        elif fortran:
            out = ndarray(shape, dt, buf, offset, None, 'F')
        else:
            out = ndarray(shape, dt, buf, offset)
        if swapped:                         # as numpy's own unpickling: values in the native byte order
            out = out.astype(dt.newbyteorder('='))
        array[0] = out
        array.append(n)


def _object_array(data, shape, n, order):
    if type(data) is not list or len(data) != n:
        _refuse('an object array of shape {} with {}: object arrays hold a list of {} values'.format(
            shape, _described(data), n))
    out = np.empty(n, dtype=object)
    for i, value in enumerate(data):
        out[i] = _plain_value(value, 'an object array')
    return out.reshape(shape, order=order)


def _buffer(data):
    if type(data) in (bytes, bytearray):
        return data
    if type(data) is str:           # a Python 2 pickle's str, read as text
        return data.encode('latin-1')
    _refuse('array data of type {}: expected bytes'.format(type(data).__name__))


def _described(value):
    """A short description of a value for a refusal: its type, and its length or value when small."""
    if type(value) in (int, float, bool, type(None)):
        return repr(value) if type(value) is not int or value.bit_length() < 64 else 'an int of {} bits'.format(
            value.bit_length())
    if hasattr(value, '__len__') and type(value) in (str, bytes, bytearray, list, tuple, dict, set, frozenset):
        return 'a {} of length {}'.format(type(value).__name__, len(value))
    return 'a {}'.format(type(value).__name__)


def short_repr(value, width=120):
    """repr of a value for a refusal, cut to ``width`` characters (no large int converted to text)."""
    try:
        if type(value) is int and value.bit_length() > 256:
            return 'an int of {} bits'.format(value.bit_length())
        text = repr(value) if type(value) not in (list, dict, tuple) or len(value) < 20 else _described(value)
    except (RecursionError, ValueError, TypeError):
        text = _described(value)
    return text if len(text) <= width else text[:width - 3] + '...'
