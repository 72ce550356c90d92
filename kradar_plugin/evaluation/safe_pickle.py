"""Reading pickles that come from elsewhere: only what K-Radar files hold, rebuilt from checked parts.

A pickle can run any code while it loads. ``kradar-eval`` reads annotation, result and info pickles written
by our runner, by EchoFusion's tools and by K-Radar's pipeline: numpy arrays, numpy scalars and dtypes,
builtin containers, strings and numbers. :func:`load` admits exactly those names and refuses anything else
with an error naming the class; ``--trust-pickle`` (``trusted=True``) reads with the plain unpickler.

Naming only allowed classes is not enough: numpy's C ``__setstate__`` trusts the state it is given (dtype
flags, field offsets, item sizes, strides), and an allowed builtin called with a large number builds a large
object from a tiny file. So no name the file references reaches numpy or a builtin directly:

* ``numpy.dtype`` gives a :class:`_Dtype` description whose state is checked (byte order, item size; no
  fields, subarrays or metadata; flags ignored); only bool, integer, float, complex, fixed-width byte and
  unicode strings and object dtypes exist;
* ``_reconstruct`` gives an :class:`_Array` whose state (shape, dtype, order, data) is checked and rebuilt
  with ``np.frombuffer(data).reshape(shape).copy()`` (an object array from a list of loaded values); data
  must hold exactly shape x itemsize bytes; no strides, no views, no other subtype; ``numpy.ndarray`` itself
  cannot be called; ``_frombuffer`` (protocol 5) and ``scalar`` are rebuilt the same way;
* builtins (``list``, ``bytes``, ``int``, ...) take only values already in the file, never a length
  (``bytes(10**9)``, ``list(range(10**9))`` are refused); ``_codecs.encode`` only encodes latin-1;
* after loading, :func:`settle` replaces the rebuilt arrays and dtypes into their containers and counts what
  the object holds when expanded (a list repeated through the pickle memo counts each time it is
  referenced): more than ``Limits.max_elements`` elements, nesting deeper than :data:`MAX_DEPTH`, a container
  that contains itself, or an integer of more than :data:`MAX_INT_BITS` bits is refused.
"""
import _compat_pickle
import collections
import pickle
import re

import numpy as np

#: builtins a K-Radar pickle may name (Python 2 and protocol <= 2 pickles spell the module ``__builtin__``)
_BUILTINS = ('list', 'dict', 'tuple', 'set', 'frozenset', 'str', 'bytes', 'bytearray', 'int', 'float', 'complex',
             'bool', 'slice', 'range')

#: (module, name) a K-Radar pickle may reference: numpy's array/scalar/dtype reconstruction (numpy 1.x
#: writes ``numpy.core.*``, numpy 2.x ``numpy._core.*``; protocol 5 adds ``_frombuffer``), the bytes helper
#: of protocol <= 2 pickles, OrderedDict (mmcv.dump) and builtins
ALLOWED = frozenset([
    ('numpy', 'ndarray'), ('numpy', 'dtype'),
    ('numpy.core.multiarray', '_reconstruct'), ('numpy.core.multiarray', 'scalar'),
    ('numpy._core.multiarray', '_reconstruct'), ('numpy._core.multiarray', 'scalar'),
    ('numpy.core.numeric', '_frombuffer'), ('numpy._core.numeric', '_frombuffer'),
    ('collections', 'OrderedDict'), ('_codecs', 'encode'),
] + [(module, n) for n in _BUILTINS for module in ('builtins', '__builtin__')])

#: containers nested deeper than this are refused (K-Radar files nest about 6 deep)
MAX_DEPTH = 32
#: integers longer than this are refused (about 4,300 decimal digits, Python 3.11's default conversion limit)
MAX_INT_BITS = 14300
#: the longest string ``int()`` / ``float()`` may parse
MAX_NUMBER_TEXT = 4300
#: the widest fixed-width string dtype (bytes per item)
MAX_ITEMSIZE = 1 << 20
_LATIN_1 = ('latin1', 'latin-1', 'iso-8859-1', 'iso8859-1', 'l1')
_DTYPE_ARG = re.compile(r'^([biufcSUO])([0-9]{1,8})$')
_FIXED_SIZES = {'b': (1,), 'i': (1, 2, 4, 8), 'u': (1, 2, 4, 8), 'f': (2, 4, 8), 'c': (8, 16), 'O': (4, 8)}
_SCALARS = (type(None), bool, float, complex, slice)
_NUMPY_SCALAR = np.generic


class RefusedPickleError(pickle.UnpicklingError):
    """The pickle references a class outside :data:`ALLOWED`, or gives one of them what K-Radar files never
    hold (a structured dtype, a buffer of the wrong length, a length to allocate, too many elements...)."""


class Limits(object):
    """What one file may hold: elements of one array, and elements in all (expanded)."""

    def __init__(self, max_array_elements=20000000, max_elements=50000000):
        self.max_array_elements = int(max_array_elements)
        self.max_elements = int(max_elements)


def _refuse(message):
    raise RefusedPickleError('refused: ' + message)


def _is_int(value):
    return type(value) is int or isinstance(value, np.integer)


class _NdarrayName(object):
    """What ``numpy.ndarray`` names in a pickle: the subtype argument of ``_reconstruct``, nothing else."""

    def __call__(self, *args, **kwargs):
        _refuse('numpy.ndarray called directly (numpy pickles name it only for _reconstruct)')

    __hash__ = None


_NDARRAY = _NdarrayName()


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
            _refuse('numpy dtype state {!r}: expected numpy\'s version 3 state'.format(_short(state)))
        order, subarray, names, fields, elsize, alignment, flags = state[1:8]
        metadata = state[8] if len(state) == 9 else None
        if subarray is not None or names is not None or fields is not None or metadata:
            _refuse('a structured, subarray or metadata dtype (K-Radar files hold plain dtypes)')
        if order not in ('<', '>', '|', '=') or not all(_is_int(v) for v in (elsize, alignment, flags)):
            _refuse('numpy dtype state {!r}'.format(_short(state)))
        if self.kind in 'SU' and elsize != self.itemsize:
            _refuse('numpy dtype state: item size {} for {}{}'.format(elsize, self.kind, self.size))
        self.order = order
        self.built = True
        self._dtype = self._info = None

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


class SafeUnpickler(pickle.Unpickler):
    """The unpickler of :func:`load`: names as :data:`ALLOWED` says, objects rebuilt (see the module
    docstring). Call :func:`settle` on what it loads."""

    def __init__(self, f, limits=None, **kwargs):
        super(SafeUnpickler, self).__init__(f, **kwargs)
        self.limits = limits or Limits()
        self.arrays = []          # every _Array of the file, in order, for _rebuild
        names = {'ndarray': _NDARRAY, 'dtype': _Dtype, '_reconstruct': _reconstructor(self.arrays),
                 'scalar': _scalar, '_frombuffer': _frombufferer(self.arrays), 'OrderedDict': _ordered_dict,
                 'encode': _encode}
        names.update((name, _checked_builtin(name)) for name in _BUILTINS)
        self._names = names

    def find_class(self, module, name):
        if module == '__builtin__':       # a Python 2 or protocol <= 2 name (xrange, unicode, long)
            module, name = _compat_pickle.NAME_MAPPING.get((module, name), ('builtins', name))
        if (module, name) in ALLOWED:
            return self._names[name]
        raise RefusedPickleError(
            'refused to load {}.{}: K-Radar evaluation pickles hold only numpy arrays/scalars, lists, dicts, '
            'strings and numbers (pass --trust-pickle if you trust this file; loading a pickle can run any '
            'code)'.format(module, name))

    def load(self):
        """The unpickled object, its arrays rebuilt (still inside their :class:`_Array`: see :func:`settle`).
        The memo is emptied before returning, so nothing the file built outlives this call by a cycle."""
        try:
            obj = super(SafeUnpickler, self).load()
            _rebuild(self.arrays, self.limits.max_array_elements)
            return obj
        finally:
            self.memo.clear()
            del self.arrays[:]


def _reconstructor(arrays):
    """``numpy.core.multiarray._reconstruct`` as :class:`SafeUnpickler` gives it: only numpy's own call
    ``_reconstruct(ndarray, (0,), b'b')``, which makes an empty :class:`_Array` (its state comes by BUILD)."""
    append = arrays.append
    expected = (_NDARRAY, (0,), b'b')
    python_2 = (_NDARRAY, (0,), 'b')

    def _reconstruct(*args):
        if args != expected and args != python_2:
            _refuse('numpy _reconstruct{!r}: numpy pickles write _reconstruct(ndarray, (0,), b\'b\')'.format(
                _short(args)))
        array = _Array()
        append(array)
        return array
    return _reconstruct


def _frombufferer(arrays):
    """``numpy.core.numeric._frombuffer`` (protocol 5): an :class:`_Array` with the state its arguments give."""
    def _frombuffer(buf=None, dtype=None, shape=None, order=None, *rest):
        if rest or order not in ('C', 'F'):
            _refuse('numpy _frombuffer: order {!r}'.format(_short(order)))
        array = _Array()
        array.append((shape, dtype, order == 'F', buf))
        arrays.append(array)
        return array
    return _frombuffer


def _scalar(dtype=None, data=None, *rest):
    if type(dtype) is not _Dtype or rest:
        _refuse('numpy scalar{!r}: expected (dtype, data)'.format(_short((dtype, data) + rest)))
    if dtype.kind == 'O':
        return _plain_value(data, 'an object scalar')
    data = _buffer(data)
    if len(data) != dtype.dtype().itemsize:
        _refuse('numpy scalar of {}: {} bytes of data'.format(dtype.dtype(), len(data)))
    return np.frombuffer(data, dtype=dtype.dtype(), count=1)[0]


def _ordered_dict(*args):
    return collections.OrderedDict(_container_arg('OrderedDict', args, (list, tuple, dict)))


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
        _refuse('numpy array shape {!r}'.format(_short(shape)))
    n = 1
    for d in shape:
        if type(d) is not int or d < 0:
            _refuse('numpy array shape {!r}'.format(_short(shape)))
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
            _refuse('numpy array state {!r}: expected (1, shape, dtype, is_fortran, data)'.format(_short(state)))
        if type(dtype) is not _Dtype:
            _refuse('numpy array with dtype {!r}: expected numpy.dtype(...)'.format(_short(dtype)))
        dt, itemsize, swapped = dtype._info or dtype.info()
        if fortran is not False and fortran is not True and (type(fortran) is not int or fortran not in (0, 1)):
            _refuse('numpy array state: is_fortran {!r}'.format(_short(fortran)))
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


def _encode(obj=None, encoding='utf-8', errors='strict', *rest):
    if type(obj) is not str or rest or encoding not in _LATIN_1 or errors != 'strict':
        _refuse('_codecs.encode{!r}: pickles encode byte strings as latin-1 only'.format(
            _short((obj, encoding, errors) + rest)))
    return obj.encode('latin-1')


def _container_arg(name, args, types):
    if not args:
        return ()
    if len(args) != 1 or type(args[0]) not in types:
        _refuse('{}({}): builds only from a value in the file ({})'.format(
            name, ', '.join(_described(a) for a in args), ', '.join(t.__name__ for t in types)))
    return args[0]


def _number_text(name, value):
    if type(value) in (str, bytes) and len(value) > MAX_NUMBER_TEXT:
        _refuse('{}() of a {}-character string'.format(name, len(value)))
    if type(value) not in (str, bytes, int, float, bool):
        _refuse('{}({})'.format(name, _described(value)))
    return value


def _checked_builtin(name):
    """The builtin ``name`` for REDUCE: called only on values already in the file, never on a length."""
    sequences = (list, tuple, set, frozenset, dict)

    def call(*args):
        if name in ('list', 'tuple', 'set', 'frozenset', 'dict'):
            return _BUILDERS[name](_container_arg(name, args, sequences))
        if name in ('bytes', 'bytearray'):
            kind = bytes if name == 'bytes' else bytearray
            if not args:
                return kind()
            if len(args) == 1 and type(args[0]) in (bytes, bytearray, list, tuple):
                return kind(args[0])
            if len(args) in (2, 3) and type(args[0]) is str and args[1] in _LATIN_1:
                return kind(args[0], 'latin-1')
            _refuse('{}({}): only bytes, a list of byte values or latin-1 text'.format(
                name, ', '.join(_described(a) for a in args)))
        if name == 'str':
            if len(args) > 1 or args and type(args[0]) not in (str, int, float, bool, type(None)):
                _refuse('str({})'.format(', '.join(_described(a) for a in args)))
            if args and type(args[0]) is int and args[0].bit_length() > MAX_INT_BITS:
                _refuse('str() of a {}-bit integer'.format(args[0].bit_length()))
            return str(*args)
        if name in ('int', 'float', 'complex', 'bool'):
            if len(args) > 2 or name != 'complex' and name != 'int' and len(args) > 1:
                _refuse('{}() with {} arguments'.format(name, len(args)))
            if name == 'int' and len(args) == 2 and not (type(args[0]) in (str, bytes) and type(args[1]) is int):
                _refuse('int({})'.format(', '.join(_described(a) for a in args)))
            values = [_number_text(name, a) if name != 'bool' else a for a in args[:1]] + list(args[1:])
            if name == 'bool' and values and type(values[0]) not in _SCALARS + (int, str, bytes):
                _refuse('bool({})'.format(_described(values[0])))
            return _BUILDERS[name](*values)
        if not all(v is None or type(v) is int for v in args) or not 1 <= len(args) <= 3:
            _refuse('{}({})'.format(name, ', '.join(_described(a) for a in args)))
        return _BUILDERS[name](*args)
    call.__name__ = name
    return call


_BUILDERS = {'list': list, 'tuple': tuple, 'set': set, 'frozenset': frozenset, 'dict': dict, 'int': int,
             'float': float, 'complex': complex, 'bool': bool, 'slice': slice, 'range': range}


def _described(value):
    """A short description of a value for a refusal: its type, and its length or value when small."""
    if type(value) in (int, float, bool, type(None)):
        return repr(value) if type(value) is not int or value.bit_length() < 64 else 'an int of {} bits'.format(
            value.bit_length())
    if hasattr(value, '__len__') and type(value) in (str, bytes, bytearray, list, tuple, dict, set, frozenset):
        return 'a {} of length {}'.format(type(value).__name__, len(value))
    return 'a {}'.format(type(value).__name__)


def _short(value, width=120):
    """repr of a value for a refusal, cut to ``width`` characters (no large int converted to text)."""
    try:
        if type(value) is int and value.bit_length() > 256:
            return 'an int of {} bits'.format(value.bit_length())
        text = repr(value) if type(value) not in (list, dict, tuple) or len(value) < 20 else _described(value)
    except (RecursionError, ValueError, TypeError):
        text = _described(value)
    return text if len(text) <= width else text[:width - 3] + '...'


_ACTIVE = object()


class _Settler(object):
    """The walk of :func:`settle`: each container visited once (``done``: id -> (container, its settled
    value, its expanded count); the container is kept so that no id is reused during the walk)."""

    def __init__(self, limits):
        self.limit = limits.max_elements
        self.done = {}

    def value(self, x, depth):
        """(x with rebuilt arrays and dtypes in place, number of elements x holds when expanded)."""
        t = type(x)
        if t is str or t is bytes or t is bytearray:
            return x, 1 + len(x) // 8
        if t is float or t is bool or x is None:
            return x, 1
        if t is int:
            if x.bit_length() > MAX_INT_BITS:
                _refuse('an integer of {} bits'.format(x.bit_length()))
            return x, 1
        if t is _Array:
            if len(x) != 2:
                _refuse('an array without its state')
            return x[0], x[1]
        if t in _SCALARS or isinstance(x, _NUMPY_SCALAR):
            return x, 1
        if t is np.ndarray:
            if x.dtype.kind == 'O':
                return x, x.size + sum(self.value(_plain_value(v, 'an object array'), depth)[1] for v in x.flat)
            return x, x.size
        if t is _Dtype:
            return x.dtype(), 1
        if t is range:
            try:
                return x, len(x)
            except OverflowError:
                return x, self.limit + 1
        if t is list or t is dict or t is tuple or t is set or t is frozenset or t is collections.OrderedDict:
            return self.container(x, t, depth)
        _refuse('a {} (not made by this loader)'.format(t.__name__))

    def container(self, x, t, depth):
        key = id(x)
        done = self.done
        hit = done.get(key)
        if hit is not None:
            if hit is _ACTIVE:
                _refuse('a {} that contains itself'.format(t.__name__))
            return hit[1], hit[2]
        if depth > MAX_DEPTH:
            _refuse('containers nested more than {} deep'.format(MAX_DEPTH))
        done[key] = _ACTIVE
        count = 1
        limit = self.limit
        value = self.value
        container = self.container
        deeper = depth + 1
        new = x
        if t is list:
            for i, v in enumerate(x):
                tv = type(v)
                if tv is _Array and len(v) == 2:
                    x[i] = v[0]
                    count += v[1]
                elif tv is float:
                    count += 1
                elif tv is dict or tv is list:
                    w, c = container(v, tv, deeper)
                    if w is not v:
                        x[i] = w
                    count += c
                else:
                    w, c = value(v, deeper)
                    if w is not v:
                        x[i] = w
                    count += c
                if count > limit:
                    break
        elif t is dict or t is collections.OrderedDict:
            for k, v in x.items():
                if type(k) is str:
                    count += 1
                else:
                    count += value(k, deeper)[1]
                tv = type(v)
                if tv is _Array and len(v) == 2:
                    x[k] = v[0]
                    count += v[1]
                elif tv is str:
                    count += 1 + len(v) // 8
                elif tv is float or tv is bool:
                    count += 1
                elif tv is dict or tv is list:
                    w, c = container(v, tv, deeper)
                    if w is not v:
                        x[k] = w
                    count += c
                else:
                    w, c = value(v, deeper)
                    if w is not v:
                        x[k] = w
                    count += c
                if count > limit:
                    break
        else:
            items = []
            for v in x:
                w, c = value(v, deeper)
                items.append(w)
                count += c
                if count > limit:
                    break
            if t is tuple and any(a is not b for a, b in zip(items, x)):
                new = tuple(items)
        if count > limit:
            _refuse('the content holds more than the limit of {:,} elements in all (counting every reference '
                    'to a shared list or array; --max-elements raises it)'.format(limit))
        done[key] = (x, new, count)
        return new, count


def settle(obj, limits=None):
    """``obj`` as :class:`SafeUnpickler` loaded it, with its rebuilt arrays and dtypes in their containers;
    refuses (RefusedPickleError) what exceeds ``limits`` when expanded, nests too deep or contains itself.
    Also checks parsed JSON the same way (no arrays there)."""
    return _Settler(limits or Limits()).value(obj, 0)[0]


def load(f, trusted=False, limits=None):
    """The object pickled in the binary file ``f``."""
    if trusted:
        return pickle.load(f)
    return settle(SafeUnpickler(f, limits).load(), limits)
