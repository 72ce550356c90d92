"""Reading pickles that come from elsewhere: only what K-Radar files hold, rebuilt from checked parts.

A pickle can run any code while it loads. The pickles ``kradar-eval`` reads (ours, EchoFusion's, K-Radar's) hold
numpy arrays, scalars and dtypes, builtin containers, strings and numbers: :func:`load` admits exactly those names
and refuses anything else naming the class; ``--trust-pickle`` (``trusted=True``) reads with the plain unpickler.

Naming only allowed classes is not enough: numpy's C ``__setstate__`` trusts the state it is given (dtype
flags, field offsets, item sizes, strides), and an allowed builtin called with a large number builds a large
object from a tiny file. So no name the file references reaches numpy or a builtin directly:

* numpy's names give the stand-ins of :mod:`safe_numpy`: a dtype is a checked description; an array
  (``_reconstruct``, numpy's own form; ``numpy.ndarray`` through NEWOBJ, the portable form of
  :mod:`kradar_plugin.files.portable_pickle`; ``_frombuffer``, protocol 5) is rebuilt from its checked
  state (data of exactly shape x itemsize bytes, no strides, no views, no other subtype); a scalar
  (``scalar``, or ``_operator.getitem`` of a 0-d array) the same way; ``numpy.ndarray`` cannot be called;
* builtins (``list``, ``bytes``, ``int``, ...) take only values already in the file, never a length
  (``bytes(10**9)``, ``list(range(10**9))`` are refused); ``_codecs.encode`` only encodes latin-1;
* after loading, :func:`settle` puts the rebuilt arrays and dtypes into their containers and counts what the
  object holds when expanded (a list shared through the memo counts at each reference): more than
  ``Limits.max_elements`` elements, nesting deeper than :data:`MAX_DEPTH`, a container that contains itself, or
  an integer of more than :data:`MAX_INT_BITS` bits is refused.
"""
import _compat_pickle
import collections
import pickle

import numpy as np

from .safe_numpy import (MAX_INT_BITS, RefusedPickleError, _Array, _Dtype, _described, _frombufferer, _indexer,
                         _ndarray_type, _NUMPY_SCALAR, _plain_value, _rebuild, _reconstructor, _refuse, _scalar,
                         short_repr)

#: builtins a K-Radar pickle may name (Python 2 and protocol <= 2 pickles spell the module ``__builtin__``)
_BUILTINS = ('list', 'dict', 'tuple', 'set', 'frozenset', 'str', 'bytes', 'bytearray', 'int', 'float', 'complex',
             'bool', 'slice', 'range')

#: (module, name) a K-Radar pickle may reference: numpy's array/scalar/dtype reconstruction (numpy 1.x
#: writes ``numpy.core.*``, numpy 2.x ``numpy._core.*``; protocol 5 adds ``_frombuffer``; the portable form
#: ``numpy.ndarray`` (NEWOBJ) and ``_operator.getitem``), the bytes helper of protocol <= 2 pickles,
#: OrderedDict (mmcv.dump) and builtins
ALLOWED = frozenset([
    ('numpy', 'ndarray'), ('numpy', 'dtype'),
    ('numpy.core.multiarray', '_reconstruct'), ('numpy.core.multiarray', 'scalar'),
    ('numpy._core.multiarray', '_reconstruct'), ('numpy._core.multiarray', 'scalar'),
    ('numpy.core.numeric', '_frombuffer'), ('numpy._core.numeric', '_frombuffer'),
    ('collections', 'OrderedDict'), ('_codecs', 'encode'), ('_operator', 'getitem'),
] + [(module, n) for n in _BUILTINS for module in ('builtins', '__builtin__')])

#: containers nested deeper than this are refused (K-Radar files nest about 6 deep)
MAX_DEPTH = 32
#: the longest string ``int()`` / ``float()`` may parse
MAX_NUMBER_TEXT = 4300
_LATIN_1 = ('latin1', 'latin-1', 'iso-8859-1', 'iso8859-1', 'l1')
_SCALARS = (type(None), bool, float, complex, slice)


class Limits(object):
    """What one file may hold: elements of one array, and elements in all (expanded)."""

    def __init__(self, max_array_elements=20000000, max_elements=50000000):
        self.max_array_elements = int(max_array_elements)
        self.max_elements = int(max_elements)


class SafeUnpickler(pickle.Unpickler):
    """The unpickler of :func:`load`: names as :data:`ALLOWED` says, objects rebuilt (see the module
    docstring). Call :func:`settle` on what it loads."""

    def __init__(self, f, limits=None, **kwargs):
        super(SafeUnpickler, self).__init__(f, **kwargs)
        self.limits = limits or Limits()
        self.arrays = []          # every _Array of the file, in order, for _rebuild
        ndarray = _ndarray_type(self.arrays)
        names = {'ndarray': ndarray, 'dtype': _Dtype, '_reconstruct': _reconstructor(self.arrays, ndarray),
                 'scalar': _scalar, '_frombuffer': _frombufferer(self.arrays), 'OrderedDict': _ordered_dict,
                 'encode': _encode, 'getitem': _indexer(self.arrays, self.limits.max_array_elements)}
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


def _ordered_dict(*args):
    return collections.OrderedDict(_container_arg('OrderedDict', args, (list, tuple, dict)))


def _encode(obj=None, encoding='utf-8', errors='strict', *rest):
    if type(obj) is not str or rest or encoding not in _LATIN_1 or errors != 'strict':
        _refuse('_codecs.encode{!r}: pickles encode byte strings as latin-1 only'.format(
            short_repr((obj, encoding, errors) + rest)))
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
        key, done = id(x), self.done
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
                else:
                    w, c = container(v, tv, deeper) if tv is dict or tv is list else value(v, deeper)
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
                else:
                    w, c = container(v, tv, deeper) if tv is dict or tv is list else value(v, deeper)
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
