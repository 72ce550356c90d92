"""The rebuild of numpy objects by ``safe_pickle`` (in process): values, layouts and sharing as numpy's own
unpickling gives them, object arrays of plain values only, and the checks that hold for every array of a file."""
import pickle

import numpy as np
import pytest

from kradar_plugin.evaluation import safe_pickle


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
