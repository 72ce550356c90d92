"""The rebuild of numpy objects by ``safe_pickle`` (in process): values, layouts and sharing as numpy's own
unpickling gives them, object arrays of plain values only, and the checks that hold for every array of a file."""
import pickle

import numpy as np
import pytest

from kradar_plugin.loading import safe_pickle


def _load(data, **limits):
    import io
    return safe_pickle.load(io.BytesIO(data), limits=safe_pickle.Limits(**limits) if limits else None)


@pytest.mark.parametrize('protocol', [2, 4, pickle.HIGHEST_PROTOCOL])
def test_arrays_come_back_as_numpy_gives_them(protocol):
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.asfortranarray(np.arange(6.0).reshape(2, 3)),
              np.arange(5, dtype='>i4'), np.zeros((0, 7)), np.array([True, False]), np.array(['Sedan', 'Bus']),
              np.array([b'ab', b'c']), np.arange(3, dtype=np.complex128), np.int64(7), np.float32(0.5),
              np.arange(7, dtype=np.uint8), np.array(3.5)]
    back = _load(pickle.dumps(arrays, protocol=protocol))
    for a, b in zip(arrays, back):
        assert type(a) is type(b)
        assert np.array_equal(a, b) and a.shape == b.shape
        if isinstance(a, np.ndarray):
            assert b.dtype == a.dtype.newbyteorder('=') and b.dtype.isnative and b.flags.writeable
            assert b.flags.aligned
    assert back[1].flags.f_contiguous
    back[0][0, 0] = 99.0                 # writable, and the neighbours keep their values
    assert back[2].tolist() == [0, 1, 2, 3, 4]


def test_a_shared_array_stays_one_array():
    a = np.arange(4.0)
    back = _load(pickle.dumps({'x': a, 'y': [a, (a, 1)]}, protocol=4))
    assert back['x'] is back['y'][0] is back['y'][1][0]


def test_object_arrays_of_plain_values_load():
    values = [None, True, 3, 2.5, 1j, 'text', b'raw', np.float32(1.5)]
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    back = _load(pickle.dumps([arr], protocol=4))[0]
    assert back.dtype == object and back.tolist() == values


@pytest.mark.parametrize('element', [[1, 2], {'a': 1}, (1, 2), {1}, np.arange(3), np.zeros(2, dtype=object)])
def test_object_arrays_refuse_containers_and_arrays(element):
    arr = np.empty(2, dtype=object)
    arr[0] = 1
    arr[1] = element
    with pytest.raises(safe_pickle.RefusedPickleError, match='object arrays may hold only'):
        _load(pickle.dumps([arr], protocol=4))


def test_object_scalar_state_must_be_plain():
    arr = np.empty((), dtype=object)
    arr[()] = [1, 2]
    with pytest.raises(safe_pickle.RefusedPickleError, match='object arrays may hold only'):
        _load(pickle.dumps([arr], protocol=2))


def test_every_array_is_checked_against_the_limits():
    data = pickle.dumps([np.zeros(10), np.zeros(3000)], protocol=4)
    with pytest.raises(safe_pickle.RefusedPickleError, match='per array'):
        _load(data, max_array_elements=2000)
    shared = pickle.dumps([np.zeros(1000)] * 1, protocol=4)
    a = np.zeros(1000)
    with pytest.raises(safe_pickle.RefusedPickleError, match='in all'):
        _load(pickle.dumps([a] * 50, protocol=4), max_elements=20000)
    assert len(_load(shared)) == 1


def test_an_array_given_two_states_or_none_is_refused():
    from .test_hostile_files import _array_of, _bin, _bytes, _global, _p, _str
    dtype = _global('numpy', 'dtype') + _str('f8') + b'\x89\x88\x87R'
    one = _array_of(dtype, b'(' + _bin(1) + b't', _bytes(b'\x00' * 8))
    state = one[one.index(b'R') + 1:-1]
    assert _load(_p(one)).tolist() == [0.0]
    with pytest.raises(safe_pickle.RefusedPickleError, match='state twice'):
        _load(_p(one + state + b'b'))
    with pytest.raises(safe_pickle.RefusedPickleError, match='without its state'):
        _load(_p(one[:one.index(b'R') + 1]))


def test_nothing_the_file_built_outlives_the_load_by_a_cycle():
    import gc
    data = pickle.dumps([np.arange(3.0)] * 3, protocol=4)
    unpickler = safe_pickle.SafeUnpickler(__import__('io').BytesIO(data))
    obj = unpickler.load()
    assert len(unpickler.memo.copy()) == 0 and unpickler.arrays == []
    gc.collect()
    assert safe_pickle.settle(obj)[0].tolist() == [0.0, 1.0, 2.0]


# The portable form (kradar_plugin.files.portable_pickle): ndarray.__new__ (NEWOBJ) + BUILD, and
# _operator.getitem(<0-d array>, ()) for scalars; the reference is numpy's own unpickling of the same bytes.

def _portable_values():
    obj_arr = np.empty(3, dtype=object)
    obj_arr[:] = [None, 'Sedan', 2.5]
    zero_d_object = np.empty((), dtype=object)
    zero_d_object[()] = 'x'
    return [np.arange(12, dtype=np.float32).reshape(3, 4), np.asfortranarray(np.arange(6.0).reshape(2, 3)),
            np.arange(10)[::3], np.arange(5, dtype='>i4'), np.zeros((0, 3)), np.array(['Sedan', 'Bus']),
            np.array([b'ab', b'c']), np.array(3.5), obj_arr, zero_d_object, np.float64(2.5), np.int64(-3),
            np.bool_(True), np.float32(0.25), np.str_('Truck'), np.uint8(7), {'k': np.int32(4)}]


@pytest.mark.parametrize('protocol', [2, 4])
def test_portable_pickles_load_as_numpy_loads_them(protocol):
    from kradar_plugin.files import portable_pickle
    values = _portable_values()
    data = portable_pickle.dumps(values, protocol=protocol)
    back, reference = _load(data), pickle.loads(data)
    assert len(back) == len(reference) == len(values)
    for a, b, ref in zip(values, back, reference):
        assert type(b) is type(ref) is type(a)
        if isinstance(a, dict):
            assert type(b['k']) is np.int32 and b == ref == a
            continue
        assert np.array_equal(np.asarray(b, dtype=object), np.asarray(a, dtype=object))
        if isinstance(a, np.ndarray):
            assert b.dtype == ref.dtype and b.shape == ref.shape == a.shape and b.flags.writeable
            assert b.flags.f_contiguous == ref.flags.f_contiguous and b.flags.c_contiguous == ref.flags.c_contiguous
        else:
            assert b.dtype == ref.dtype == a.dtype


def _ndarray_new(*args_ops):
    """numpy.ndarray.__new__(numpy.ndarray, *args) by NEWOBJ (protocol 2 ops)."""
    from .test_hostile_files import _global
    return _global('numpy', 'ndarray') + b'(' + b''.join(args_ops) + b't' + b'\x81'


def _portable_state(dtype_code, shape, data):
    """numpy's array state (1, shape, dtype, is_fortran, data) as opcodes."""
    from .test_hostile_files import _bin, _bytes, _global, _str
    dtype = _global('numpy', 'dtype') + _str(dtype_code) + b'\x89\x88\x87R'
    shape_ops = b'(' + b''.join(_bin(d) for d in shape) + b't'
    return b'(' + _bin(1) + shape_ops + dtype + b'\x89' + _bytes(data) + b't'


def _portable_array(dtype_code, shape, data):
    from .test_hostile_files import _bin, _str
    return _ndarray_new(b'(' + _bin(0) + b't', _str('b')) + _portable_state(dtype_code, shape, data) + b'b'


def _getitem(array_ops, index_ops=b')'):
    from .test_hostile_files import _global
    return _global('_operator', 'getitem') + array_ops + index_ops + b'\x86R'


def test_portable_forms_written_by_hand_load():
    from .test_hostile_files import _p
    assert _load(_p(_portable_array('f8', (2,), np.array([1.5, -2.0]).tobytes()))).tolist() == [1.5, -2.0]
    scalar = _load(_p(_getitem(_portable_array('i4', (), np.int32(9).tobytes()))))
    assert type(scalar) is np.int32 and scalar == 9


@pytest.mark.parametrize('ops, match', [
    # numpy.ndarray called (REDUCE) instead of NEWOBJ: numpy would allocate what the arguments say
    (lambda h: h._global('numpy', 'ndarray') + b'(' + h._bin(10 ** 9) + b't' + h._str('f8') + b'\x86R',
     'called directly'),
    # NEWOBJ with a shape or dtype of its own: only numpy's empty (0,), 'b' array, whose state comes by BUILD
    (lambda h: _ndarray_new(b'(' + h._bin(10 ** 9) + b't', h._str('f8')), r'ndarray.__new__'),
    (lambda h: _ndarray_new(b'(' + h._bin(0) + b't', h._str('b'), h._bin(0)), r'ndarray.__new__'),
    # NEWOBJ_EX (protocol 4) with keyword arguments
    (lambda h: h._global('numpy', 'ndarray') + b'(' + h._bin(0) + b't' + h._str('b') + b'\x86' + b'}' +
     h._str('buffer') + h._bytes(b'x' * 8) + b's\x92', r'ndarray.__new__'),
    # a state whose data does not hold shape x itemsize bytes (numpy's setstate would read past it)
    (lambda h: _portable_array('f8', (4,), b'\x00' * 8), 'bytes of data'),
    (lambda h: _portable_array('U4', (1, 2), b'\x00' * 8), 'bytes of data'),
    # a structured dtype, as through _reconstruct
    (lambda h: _portable_array('V16', (1,), b'\x00' * 16), 'only bool, integer'),
    # shapes past the per-array limit, negative shapes
    (lambda h: _portable_array('u1', (10 ** 6, 10 ** 6), b''), 'per array'),
    (lambda h: _portable_array('u1', (-1,), b''), 'shape'),
    # an array given no state, or two
    (lambda h: _ndarray_new(b'(' + h._bin(0) + b't', h._str('b')), 'without its state'),
    (lambda h: _portable_array('f8', (1,), b'\x00' * 8) + _portable_state('f8', (1,), b'\x00' * 8) + b'b',
     'state twice'),
    # getitem of what is not a 0-d array just built, or with another index
    (lambda h: _getitem(_portable_array('f8', (2,), b'\x00' * 16)), 'comes from a 0-d array'),
    (lambda h: _getitem(_portable_array('f8', (), b'\x00' * 8), b'(' + h._bin(0) + b't'), 'index only'),
    (lambda h: _getitem(_portable_array('f8', (), b'\x00' * 8), h._bin(0)), 'index only'),
    (lambda h: _getitem(b']' + h._bin(1) + b'a'), 'index only'),
    (lambda h: _getitem(_ndarray_new(b'(' + h._bin(0) + b't', h._str('b'))), 'without its state'),
    (lambda h: _portable_array('f8', (), b'\x00' * 8) + b'q\x01' + _portable_array('f8', (), b'\x00' * 8) +
     b'0' + _getitem(b'h\x01'), 'other than the one just built'),
    (lambda h: _getitem(_portable_array('f8', (), b'\x00' * 8) + b'q\x01') + b'0' + _getitem(b'h\x01'),
     'other than the one just built'),
    # getitem of an object array holding a container
    (lambda h: _getitem(h._global('numpy', 'ndarray') + b'(' + h._bin(0) + b't' + h._str('b') + b'\x86\x81' +
                        b'(' + h._bin(1) + b')' + h._global('numpy', 'dtype') + h._str('O8') + b'\x89\x88\x87R' +
                        b'\x89' + b']' + b']' + b'a' + b'tb'), 'object arrays may hold only'),
])
def test_hostile_portable_forms_are_refused(ops, match):
    from . import test_hostile_files as h
    with pytest.raises(safe_pickle.RefusedPickleError, match=match):
        _load(h._p(ops(h)))


def test_portable_form_runs_no_numpy_code_before_its_checks():
    """A huge NEWOBJ shape is refused before numpy could allocate it (the plain unpickler would try)."""
    from . import test_hostile_files as h
    data = h._p(_ndarray_new(b'(' + h._bin(2 ** 30) + h._bin(2 ** 30) + b't', h._str('f8')))
    with pytest.raises(safe_pickle.RefusedPickleError):
        _load(data)
    with pytest.raises((MemoryError, ValueError)):
        pickle.loads(data)
