"""Pickles of numpy objects that every numpy >= 1.17 (and 2.x) reads with a plain ``pickle.load``.

numpy 2 pickles an array as ``numpy._core.multiarray._reconstruct`` and a scalar as
``numpy._core.multiarray.scalar``; numpy 1.x has no ``numpy._core`` (``No module named 'numpy._core'`` when
EchoFusion's numpy 1.19 reads infos written under numpy 2). This pickler names only what every version has:

* an array (exact ``numpy.ndarray``) is ``numpy.ndarray.__new__(numpy.ndarray, (0,), 'b')`` (NEWOBJ) and
  numpy's own ``__setstate__`` with its state (BUILD): the calls numpy's ``_reconstruct`` makes, so the same
  writable array (values, dtype, shape, memory order);
* a numpy scalar is ``_operator.getitem(<0-d array>, ())``, of the same type (``numpy.bool_`` is ``numpy.bool``
  in numpy 2 and absent from 1.24-1.26: scalar classes are never named);
* dtypes and subclasses of ``ndarray`` keep numpy's own form. The default protocol is 4 (Python 3.7's highest).
"""
import copyreg
import io
import operator
import pickle

import numpy as np

PROTOCOL = 4
_NEWOBJ = copyreg.__newobj__
_EMPTY = (np.ndarray, (0,), 'b')       # numpy's _reconstruct(ndarray, (0,), b'b') as ndarray.__new__ arguments


def array_reducer():
    """The reducer of arrays for one pickler: NEWOBJ ``numpy.ndarray`` + BUILD with numpy's own state (version,
    shape, dtype, is_fortran, data). For a C-contiguous array of a plain dtype (no objects, fields or metadata)
    the state is built here as numpy builds it (is_fortran False, the raw bytes), twice as fast as
    ``ndarray.__reduce__``; and equal dtypes are written as one object (each string array has a dtype object of
    its own, e.g. '<U12', which the pickler would write again every time). Both matter on infos of 35,000
    frames with ten small arrays each, the converter's larger cost."""
    plain = {}

    def reduce_array(array):
        dtype = array.dtype
        same = plain.get(dtype)
        if same is None:
            same = plain[dtype] = (dtype if not dtype.hasobject and dtype.fields is None and dtype.metadata is None
                                   else False)
        if same is not False and array.flags.c_contiguous:
            return _NEWOBJ, _EMPTY, (1, array.shape, same, False, array.tobytes())
        return _NEWOBJ, _EMPTY, array.__reduce__()[2]
    return reduce_array


def _reduce_scalar(value):
    """``getitem(0-d array, ())``: the scalar rebuilt by indexing, so no scalar class is named."""
    return operator.getitem, (np.asarray(value), ())


def _scalar_types():
    """Every numpy scalar class (the subclasses of ``numpy.generic``, abstract ones included: harmless)."""
    found, todo = set(), [np.generic]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in found and sub.__module__ == 'numpy':
                found.add(sub)
                todo.append(sub)
    return found


_TABLE = dict((t, _reduce_scalar) for t in _scalar_types())


class PortablePickler(pickle.Pickler):
    """``pickle.Pickler`` (the C one) whose dispatch table writes arrays and numpy scalars portably."""

    def __init__(self, f, protocol=PROTOCOL, **kwargs):
        if protocol is None or protocol < 2:
            raise ValueError('portable pickles need protocol 2 or higher (NEWOBJ), not {}'.format(protocol))
        super(PortablePickler, self).__init__(f, protocol, **kwargs)
        table = dict(copyreg.dispatch_table)      # the registry of the moment, as the plain pickler uses it
        table.update(_TABLE)
        table[np.ndarray] = array_reducer()
        self.dispatch_table = table


def dump(obj, f, protocol=PROTOCOL):
    """Pickle ``obj`` into the binary file ``f`` in the portable form."""
    PortablePickler(f, protocol).dump(obj)


def dumps(obj, protocol=PROTOCOL):
    """The portable pickle of ``obj`` as bytes."""
    buf = io.BytesIO()
    dump(obj, buf, protocol)
    return buf.getvalue()
