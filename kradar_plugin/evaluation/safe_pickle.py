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

    def dtype(self):
        if self._dtype is None:
            dtype = np.dtype('O') if self.kind == 'O' else np.dtype('{}{}'.format(self.kind, self.size))
            if self.order in '<>' and dtype.byteorder not in ('|',):
                dtype = dtype.newbyteorder(self.order)
            self._dtype = dtype
        return self._dtype


class _Array(object):
    """An array as the file describes it; ``value`` is the rebuilt ndarray once its state was checked."""

    __hash__ = None

    def __init__(self, loader):
        self.loader = loader
        self.value = None

    def __setstate__(self, state):
        if self.value is not None:
            _refuse('an array given a state twice')
        if type(state) is not tuple or len(state) not in (4, 5) or len(state) == 5 and state[0] != 1:
            _refuse('numpy array state {!r}: expected (1, shape, dtype, is_fortran, data)'.format(_short(state)))
        shape, dtype, fortran, data = state[-4:]
        if type(fortran) not in (bool, int) or fortran not in (0, 1):
            _refuse('numpy array state: is_fortran {!r}'.format(_short(fortran)))
        self.value = self.loader.array(data, dtype, shape, 'F' if fortran else 'C')


class SafeUnpickler(pickle.Unpickler):
    """The unpickler of :func:`load`: names as :data:`ALLOWED` says, objects rebuilt (see the module
    docstring). Call :func:`settle` on what it loads."""

    def __init__(self, f, limits=None, **kwargs):
        super(SafeUnpickler, self).__init__(f, **kwargs)
        self.limits = limits or Limits()
        self._names = {
            'ndarray': _NDARRAY, 'dtype': _Dtype, '_reconstruct': self._reconstruct, 'scalar': self._scalar,
            '_frombuffer': self._frombuffer, 'OrderedDict': self._ordered_dict, 'encode': _encode}
        self._names.update((name, _checked_builtin(name)) for name in _BUILTINS)

    def find_class(self, module, name):
        if module == '__builtin__':       # a Python 2 or protocol <= 2 name (xrange, unicode, long)
            module, name = _compat_pickle.NAME_MAPPING.get((module, name), ('builtins', name))
        if (module, name) in ALLOWED:
            return self._names[name]
        raise RefusedPickleError(
            'refused to load {}.{}: K-Radar evaluation pickles hold only numpy arrays/scalars, lists, dicts, '
            'strings and numbers (pass --trust-pickle if you trust this file; loading a pickle can run any '
            'code)'.format(module, name))

    def _reconstruct(self, subtype=None, shape=None, dtype=None, *rest):
        if subtype is not _NDARRAY or rest or shape != (0,) or dtype not in (b'b', 'b'):
            _refuse('numpy _reconstruct{!r}: numpy pickles write _reconstruct(ndarray, (0,), b\'b\')'.format(
                _short((subtype, shape, dtype) + rest)))
        return _Array(self)

    def _frombuffer(self, buf=None, dtype=None, shape=None, order=None, *rest):
        if rest or order not in ('C', 'F'):
            _refuse('numpy _frombuffer: order {!r}'.format(_short(order)))
        array = _Array(self)
        array.value = self.array(buf, dtype, shape, order)
        return array

    def _scalar(self, dtype=None, data=None, *rest):
        if type(dtype) is not _Dtype or rest:
            _refuse('numpy scalar{!r}: expected (dtype, data)'.format(_short((dtype, data) + rest)))
        if dtype.kind == 'O':
            return data
        data = _buffer(data)
        if len(data) != dtype.dtype().itemsize:
            _refuse('numpy scalar of {}: {} bytes of data'.format(dtype.dtype(), len(data)))
        return np.frombuffer(data, dtype=dtype.dtype(), count=1)[0]

    def _ordered_dict(self, *args):
        return collections.OrderedDict(_container_arg('OrderedDict', args, (list, tuple, dict)))

    def array(self, data, dtype, shape, order):
        """The ndarray of checked parts (see the module docstring)."""
        if type(dtype) is not _Dtype:
            _refuse('numpy array with dtype {!r}: expected numpy.dtype(...)'.format(_short(dtype)))
        if type(shape) is not tuple or len(shape) > 32:
            _refuse('numpy array shape {!r}'.format(_short(shape)))
        limit = self.limits.max_array_elements
        n = 1
        for d in shape:
            if type(d) is not int or d < 0:
                _refuse('numpy array shape {!r}'.format(_short(shape)))
            n *= d
            if d > limit or n > limit:
                _refuse('an array of shape {} holds more than the limit of {:,} elements per array '
                        '(--max-array-elements raises it)'.format(shape, limit))
        dt = dtype._dtype or dtype.dtype()
        if dt.kind == 'O':
            return _object_array(data, shape, n, order)
        if type(data) is not bytes and type(data) is not bytearray:
            data = _buffer(data)
        if len(data) != n * dt.itemsize:
            _refuse('an array of shape {} and dtype {} with {} bytes of data ({} expected)'.format(
                shape, dt, len(data), n * dt.itemsize))
        if n == 0:
            return np.zeros(shape, dtype=dt)
        out = np.frombuffer(bytearray(data), dtype=dt)         # a writable copy the array owns through base
        if len(shape) != 1 or order != 'C':
            out = out.reshape(shape, order=order)
        if not dt.isnative:                 # as numpy's own unpickling: values in the native byte order
            return out.astype(dt.newbyteorder('='))
        return out


def _object_array(data, shape, n, order):
    if type(data) is not list or len(data) != n:
        _refuse('an object array of shape {} with {}: object arrays hold a list of {} values'.format(
            shape, _described(data), n))
    out = np.empty(n, dtype=object)
    for i, value in enumerate(data):
        out[i] = value.value if type(value) is _Array else value
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


class _Settler(object):
    def __init__(self, limits):
        self.max_elements = limits.max_elements
        self.done = {}
        self.active = set()

    def leaf(self, x, t):
        """(x, its element count) for a value that holds no other, or None."""
        if t is str or t is bytes or t is bytearray:
            return x, 1 + len(x) // 8
        if t is int:
            if x.bit_length() > MAX_INT_BITS:
                _refuse('an integer of {} bits'.format(x.bit_length()))
            return x, 1
        if t in _SCALARS or isinstance(x, _NUMPY_SCALAR):
            return x, 1
        if t is _Array:
            if x.value is None:
                _refuse('an array without its state')
            if x.value.dtype.kind != 'O':
                return x.value, x.value.size
        return None

    def settle(self, x, depth):
        """(x with rebuilt arrays and dtypes in place, number of elements x holds when expanded)."""
        t = type(x)
        simple = self.leaf(x, t)
        if simple is not None:
            return simple
        key = id(x)
        hit = self.done.get(key)
        if hit is not None:
            return hit
        if key in self.active:
            _refuse('a {} that contains itself'.format(t.__name__))
        if depth > MAX_DEPTH:
            _refuse('containers nested more than {} deep'.format(MAX_DEPTH))
        self.active.add(key)
        count = 1
        new = x
        leaf, limit, deeper = self.leaf, self.max_elements, depth + 1
        if t is list:
            for i, v in enumerate(x):
                done = leaf(v, type(v)) or self.settle(v, deeper)
                if done[0] is not v:
                    x[i] = done[0]
                count += done[1]
                if count > limit:
                    break
        elif t is dict or t is collections.OrderedDict:
            for k, v in x.items():
                if type(k) is str:
                    count += 1
                else:
                    count += (leaf(k, type(k)) or self.settle(k, deeper))[1]
                done = leaf(v, type(v)) or self.settle(v, deeper)
                if done[0] is not v:
                    x[k] = done[0]
                count += done[1]
                if count > limit:
                    break
        elif t is tuple or t is set or t is frozenset:
            items = []
            for v in x:
                done = leaf(v, type(v)) or self.settle(v, deeper)
                items.append(done[0])
                count += done[1]
                if count > limit:
                    break
            if t is tuple and any(a is not b for a, b in zip(items, x)):
                new = tuple(items)
        elif t is _Array or t is np.ndarray:
            new = x.value if t is _Array else x
            count = new.size
            if new.dtype.kind == 'O':
                for v in new.flat:
                    count += (leaf(v, type(v)) or self.settle(v, deeper))[1]
        elif t is _Dtype:
            new = x.dtype()
        elif t is range:
            try:
                count = len(x)
            except OverflowError:
                count = limit + 1
        else:
            _refuse('a {} (not made by this loader)'.format(t.__name__))
        if count > limit:
            _refuse('the content holds more than the limit of {:,} elements in all (counting every reference '
                    'to a shared list or array; --max-elements raises it)'.format(limit))
        self.active.discard(key)
        self.done[key] = (new, count)
        return new, count


def settle(obj, limits=None):
    """``obj`` as :class:`SafeUnpickler` loaded it, with its rebuilt arrays and dtypes in their containers;
    refuses (RefusedPickleError) what exceeds ``limits`` when expanded, nests too deep or contains itself."""
    return _Settler(limits or Limits()).settle(obj, 0)[0]


def load(f, trusted=False, limits=None):
    """The object pickled in the binary file ``f``."""
    if trusted:
        return pickle.load(f)
    return settle(SafeUnpickler(f, limits).load(), limits)
