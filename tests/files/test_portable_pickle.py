"""Portable pickles (``files.portable_pickle``): every numpy >= 1.17 reads them with a plain ``pickle.load``.

Round trips on the running stack take numpy's own unpickling as the reference; the pickle's globals are read
with ``pickletools``; and across real stacks: infos written by ``kradar-create-data`` under numpy 2 are read by
EchoFusion's interpreter (``.venv-echofusion``: Python 3.7, numpy 1.19) and the other way round, every leaf
compared by a small program run in each interpreter.
"""
import json
import os
import pickle
import pickletools
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.files import portable_pickle
from tests.launching import ROOT

#: modules every numpy >= 1.17 on every Python 3 has: what a portable pickle may name
PORTABLE_MODULES = {'numpy', '_operator', 'builtins', 'collections'}


def _values():
    obj = np.empty(4, dtype=object)
    obj[:] = [None, 'Sedan', 2.5, np.float32(1.5)]
    zero_d_object = np.empty((), dtype=object)
    zero_d_object[()] = 'x'
    return {
        'c': np.arange(12, dtype=np.float32).reshape(3, 4), 'fortran': np.asfortranarray(np.ones((2, 3))),
        'strided': np.arange(20)[::3], 'transposed': np.arange(6).reshape(2, 3).T,
        'big_endian': np.arange(5, dtype='>i4'), 'empty': np.zeros((0, 3)),
        'names': np.array(['Sedan', 'Bus or Truck']), 'bytes': np.array([b'ab', b'c']), 'zero_d': np.array(3.5),
        'object': obj, 'zero_d_object': zero_d_object, 'bool_array': np.array([True, False]),
        'complex': np.arange(3, dtype=np.complex128) * 1j, 'float64': np.float64(2.5), 'int64': np.int64(-3),
        'bool': np.bool_(True), 'float32': np.float32(0.25), 'str': np.str_('Truck'), 'uint8': np.uint8(7),
        'key': {np.int64(4): 'an int64 key'}, 'plain': [1, 2.0, 'three', None, (4,)],
    }


def _globals(data):
    """(module, name) of every global the pickle names (GLOBAL, or STACK_GLOBAL of the last two strings pushed,
    memoised strings included)."""
    found, memo, strings = set(), {}, []
    for op, arg, _ in pickletools.genops(data):
        if op.name == 'GLOBAL':
            found.add(tuple(arg.split(' ', 1)))
        elif op.name in ('SHORT_BINUNICODE', 'BINUNICODE', 'UNICODE', 'BINUNICODE8'):
            strings.append(arg)
        elif op.name == 'MEMOIZE':
            memo[len(memo)] = strings[-1] if strings else None
        elif op.name in ('BINPUT', 'LONG_BINPUT', 'PUT'):
            memo[arg] = strings[-1] if strings else None
        elif op.name in ('BINGET', 'LONG_BINGET', 'GET'):
            strings.append(memo.get(arg))
        elif op.name == 'STACK_GLOBAL':
            found.add((strings[-2], strings[-1]))
        if op.name not in ('SHORT_BINUNICODE', 'BINUNICODE', 'UNICODE', 'BINUNICODE8', 'MEMOIZE', 'BINPUT',
                           'LONG_BINPUT', 'PUT', 'BINGET', 'LONG_BINGET', 'GET'):
            strings.append(None)        # anything else on the stack breaks a (module, name) pair
    return found


def _same(a, b):
    """b is what numpy's own pickling of a gives: type, dtype, shape, memory order, values, writable."""
    assert type(b) is type(a)
    if isinstance(a, dict):
        assert [(type(k), repr(k)) for k in b] == [(type(k), repr(k)) for k in a]
        for k in a:
            _same(a[k], b[k])
        return
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b) and all(_same(x, y) is None for x, y in zip(a, b))
        return
    if isinstance(a, (np.ndarray, np.generic)):
        ref = pickle.loads(pickle.dumps(a, protocol=4))
        assert b.dtype == ref.dtype and b.shape == ref.shape == a.shape
        assert np.asarray(b, dtype=object).tolist() == np.asarray(a, dtype=object).tolist()
        if isinstance(a, np.ndarray):
            assert b.flags.writeable and b.flags.aligned
            assert (b.flags.c_contiguous, b.flags.f_contiguous) == (ref.flags.c_contiguous, ref.flags.f_contiguous)
        return
    assert b == a


@pytest.mark.parametrize('protocol', [2, 3, 4])
def test_round_trip_gives_what_numpy_gives(protocol):
    values = _values()
    back = pickle.loads(portable_pickle.dumps(values, protocol=protocol))
    _same(values, back)
    back['c'][0, 0] = 99.0                      # writable in place, as mmdet3d's pipelines need
    assert back['c'][0, 0] == 99.0 and values['c'][0, 0] == 0.0


def test_dump_to_a_file_and_shared_arrays_stay_shared(tmp_path):
    a = np.arange(4.0)
    path = str(tmp_path / 'x.pkl')
    with open(path, 'wb') as f:
        portable_pickle.dump({'x': a, 'y': [a, (a, 1)], 's': [np.float64(1.0)] * 2}, f)
    with open(path, 'rb') as f:
        back = pickle.load(f)
    assert back['x'] is back['y'][0] is back['y'][1][0]
    assert back['x'].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_globals_name_only_what_every_numpy_has():
    values = _values()
    data = portable_pickle.dumps(values)
    names = _globals(data)
    assert {m for m, _ in names} <= PORTABLE_MODULES, names
    assert names == {('numpy', 'ndarray'), ('numpy', 'dtype'), ('_operator', 'getitem')}
    # the walk sees what numpy's own pickle names (numpy 2: numpy._core, which numpy 1.x lacks)
    own = _globals(pickle.dumps(values, protocol=4))
    assert any(name == '_reconstruct' for _, name in own) and any(name == 'scalar' for _, name in own)
    if int(np.__version__.split('.')[0]) >= 2:
        assert {m for m, _ in own} - PORTABLE_MODULES == {'numpy._core.multiarray'}


def test_protocol_below_2_is_refused():
    with pytest.raises(ValueError, match='protocol 2'):
        portable_pickle.dumps([np.zeros(1)], protocol=1)


# --- across real stacks -------------------------------------------------------------------------------------

#: run by each interpreter: load the pickle with a plain pickle.load and describe every leaf as JSON
DESCRIBE = r'''
import json, pickle, sys
import numpy as np

def leaf(x):
    if isinstance(x, np.ndarray):
        if x.size:
            x.flat[0] = x.flat[0]            # raises on a read-only array
        return ['ndarray', x.dtype.str, list(x.shape), bool(x.flags.writeable), bool(x.flags.f_contiguous),
                np.asarray(x, dtype=object).tolist() if x.dtype.kind == 'O' else x.tolist()]
    if isinstance(x, np.generic):
        return ['numpy scalar', x.dtype.str, x.item()]
    return [type(x).__name__, x]

def walk(x, path, out):
    if isinstance(x, dict):
        for k in sorted(x, key=repr):
            walk(x[k], path + [repr(k)], out)
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            walk(v, path + [i], out)
    else:
        out.append([path, leaf(x)])

with open(sys.argv[1], 'rb') as f:
    obj = pickle.load(f)
out = []
walk(obj, [], out)
print(json.dumps({'numpy': np.__version__, 'python': sys.version.split()[0], 'leaves': out}))
'''


def _numpy_major(python):
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        return int(np.__version__.split('.')[0])
    out = subprocess.run([python, '-c', 'import numpy; print(numpy.__version__)'], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    return int(out.stdout.split('.')[0]) if out.returncode == 0 else None


def _stacks():
    """(numpy-2 interpreter, EchoFusion's numpy-1.19 interpreter), or skip naming what is missing."""
    echofusion = os.path.join(ROOT, '.venv-echofusion', 'bin', 'python')
    if not os.path.exists(echofusion):
        pytest.skip('no .venv-echofusion next to the checkout (make env-echofusion): EchoFusion\'s numpy 1.19 '
                    'interpreter is the reader this test is about')
    numpy2 = [p for p in (os.path.join(ROOT, '.venv-light', 'bin', 'python'), sys.executable)
              if os.path.exists(p) and (_numpy_major(p) or 0) >= 2]
    if not numpy2:
        pytest.skip('no interpreter with numpy >= 2 (neither .venv-light nor {}): make env-light'.format(
            sys.executable))
    assert _numpy_major(echofusion) == 1
    return numpy2[0], echofusion


def _run(python, args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([python] + args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300)
    assert proc.returncode == 0, (python, args, proc.stdout[-2000:], proc.stderr[-3000:])
    return proc.stdout


def _create_data(python, demo_tree, out):
    _run(python, ['-m', 'kradar_plugin.files.create_data', '--root-path', demo_tree['root'], '--out-dir', out,
                  '--split-dir', demo_tree['imagesets'], '--label-version', 'v2.1', '--labels-dir',
                  demo_tree['labels_dir'], '--no-progress'], ROOT)
    names = sorted(n for n in os.listdir(out) if n.endswith('.pkl'))
    assert names == ['kradar_infos_train.pkl', 'kradar_infos_val.pkl']
    return [os.path.join(out, n) for n in names]


def _described(python, path, tmp_path):
    script = tmp_path / 'describe.py'
    script.write_text(DESCRIBE)
    return json.loads(_run(python, [str(script), path], str(tmp_path)).strip().splitlines()[-1])


def _assert_same_content(written, read, expected_numpy_major):
    assert int(read['numpy'].split('.')[0]) == expected_numpy_major
    assert [p for p, _ in written['leaves']] == [p for p, _ in read['leaves']]
    arrays = [leaf for _, leaf in read['leaves'] if leaf[0] == 'ndarray']
    assert len(arrays) > 100 and all(leaf[3] for leaf in arrays)           # every array writable
    assert written['leaves'] == read['leaves']


def test_infos_written_under_numpy_2_load_in_echofusion(demo_tree, tmp_path):
    """kradar-create-data run by a numpy-2 interpreter; its infos read by Python 3.7 / numpy 1.19."""
    numpy2, echofusion = _stacks()
    for path in _create_data(numpy2, demo_tree, str(tmp_path / 'infos')):
        with open(path, 'rb') as f:
            assert {m for m, _ in _globals(f.read())} <= PORTABLE_MODULES
        written = _described(numpy2, path, tmp_path)
        assert int(written['numpy'].split('.')[0]) >= 2
        _assert_same_content(written, _described(echofusion, path, tmp_path), 1)


def test_portable_dump_under_numpy_2_loads_in_echofusion(demo_tree, tmp_path):
    """The converter's infos (library call) pickled by portable_pickle under numpy 2, read by numpy 1.19."""
    numpy2, echofusion = _stacks()
    out = str(tmp_path / 'infos.pkl')
    code = ('import sys; from kradar_plugin.files import portable_pickle; '
            'from kradar_plugin.files.create_data import convert_split; '
            'from kradar_plugin.files.tree import KRadarTree; '
            'infos = convert_split(KRadarTree(sys.argv[1]), sys.argv[2]); '
            'f = open(sys.argv[3], "wb"); portable_pickle.dump(infos, f); f.close()')
    _run(numpy2, ['-c', code, demo_tree['root'], os.path.join(demo_tree['imagesets'], 'val.txt'), out], ROOT)
    _assert_same_content(_described(numpy2, out, tmp_path), _described(echofusion, out, tmp_path), 1)


def test_infos_written_under_numpy_1_19_load_under_numpy_2(demo_tree, tmp_path):
    """The other way: kradar-create-data on Python 3.7 / numpy 1.19, its infos read under numpy 2."""
    numpy2, echofusion = _stacks()
    for path in _create_data(echofusion, demo_tree, str(tmp_path / 'infos')):
        written = _described(echofusion, path, tmp_path)
        _assert_same_content(written, _described(numpy2, path, tmp_path), _numpy_major(numpy2))


def test_the_state_built_for_contiguous_arrays_is_numpys_own():
    """The fast path's BUILD state equals ``ndarray.__reduce__``'s for every C-contiguous kind of array
    (0-d, 1-d, 2-d, empty, strings, big-endian, bool, a row slice); other arrays take numpy's own state; equal
    string dtypes of two arrays are written as one object."""
    from kradar_plugin.files.portable_pickle import array_reducer
    reduce_array = array_reducer()
    base = np.arange(12.0).reshape(4, 3)
    for array in (np.array(2.5), np.arange(5), base, base[1:3], np.zeros((0, 3)),
                  np.array(['Sedan', 'Bus or Truck']), np.arange(4, dtype='>i4'), np.array([True, False]),
                  base.T, base[:, 1], np.array([None, 1], dtype=object)):
        assert reduce_array(array)[2] == array.__reduce__()[2]
    names = [np.array(['Sedan', 'Bus or Truck']), np.array(['Bus or Truck'] * 3)]
    assert names[0].dtype is not names[1].dtype
    assert reduce_array(names[0])[2][2] is reduce_array(names[1])[2][2]
