"""Hostile and malformed input files, as an attacker would write them, through the real ``kradar-eval``.

Each must end with exit code 2 and one ``kradar-eval: error:`` line naming the file, no traceback, within a
bounded time (relative to the reading time limit, which these runs set low), and never run code, crash,
hang or blow up memory. The corpus is built here: numpy state tricks (object dtype with fields/flags, field
offsets, strides), memo and length bombs, colliding dict keys, deep nesting, wrong types at every level,
overflow, NaN/inf, counts, directories, non-UTF-8 and BOMs, and the name-allowlist refusals.
"""
import os
import pickle
import pickletools
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from ._data import frame, perfect
from .test_validation_cli import GT, ROOT

SECONDS = 10       # the reading time limit these runs use (--max-load-seconds; room for a loaded machine)


def _run(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('KRADAR_PLUGIN_REGISTER', None)
    code = 'import sys, kradar_cli; sys.exit(kradar_cli.eval_main(sys.argv[1:]))'
    start = time.time()
    proc = subprocess.run([sys.executable, '-c', code] + args + ['--max-load-seconds', str(SECONDS)], cwd=cwd,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=600)
    return proc, time.time() - start


def _p(*ops):
    """A pickle stream of raw opcodes (protocol 2 header, STOP appended)."""
    return b'\x80\x02' + b''.join(ops) + b'.'


def _global(module, name):
    return b'c' + module.encode() + b'\n' + name.encode() + b'\n'


def _str(text):
    data = text.encode('utf-8')
    return b'X' + struct.pack('<I', len(data)) + data


def _bin(n):
    return b'J' + struct.pack('<i', n)


def _bytes(data):
    return b'C' + bytes([len(data)]) + data if len(data) < 256 else b'B' + struct.pack('<I', len(data)) + data


def _dtype_state(*state):
    return b'(' + b''.join(state) + b't'


NONE = b'N'
DTYPE_O = _global('numpy', 'dtype') + _str('O8') + b'\x89\x88\x87R'     # numpy.dtype('O8', False, True)


def _object_dtype_with_fields():
    """numpy.dtype('O8') given a state with names/fields/flags: numpy's C setstate would trust it."""
    fields = b'}' + _str('a') + b'(' + DTYPE_O + _bin(8) + b'\x86' + b's'
    state = b'(' + _bin(3) + _str('|') + NONE + b'(' + _str('a') + b't' + fields + _bin(16) + _bin(8) + _bin(63) + b't'
    return _p(DTYPE_O + state + b'b')


def _array_of(dtype_ops, shape_ops, data_ops, version=True):
    recon = _global('numpy.core.multiarray', '_reconstruct') + _global('numpy', 'ndarray') + b'(' + _bin(0) + b't' + \
        _bytes(b'b') + b'\x87R'
    state = b'(' + (_bin(1) if version else b'') + shape_ops + dtype_ops + b'\x89' + data_ops + b't'
    return recon + state + b'b'


def _list_of(*items):
    return b']' + b'(' + b''.join(items) + b'e'


def _memo_nest(depth, width):
    """[[...]*width]*width ... depth times, shared through the memo: tiny file, huge expansion."""
    ops = b']' + b'q\x00'
    for level in range(1, depth + 1):
        ops += b']' + b'(' + b'h' + bytes([level - 1]) + b'' * 0 + b'e'
        ops = ops[:-1] + (b'h' + bytes([level - 1])) * (width - 1) + b'e' + b'q' + bytes([level])
    return _p(ops)


def _colliding_dict(n):
    mod = (1 << 61) - 1
    body = b''.join(b'\x8a\x0c' + (k * mod).to_bytes(12, 'little', signed=True) + NONE for k in range(1, n))
    return _p(b'}(' + body + b'u')


def _deep_list(depth):
    return _p(b'(]' * 0 + b']' * depth + b'a' * (depth - 1))


CORPUS = {
    # numpy state tricks
    'object_dtype_fields.pkl': _object_dtype_with_fields(),
    'object_array_from_bytes.pkl': _p(_array_of(DTYPE_O, b'(' + _bin(4) + b't', _bytes(b'A' * 32))),
    'short_buffer.pkl': _p(_array_of(_global('numpy', 'dtype') + _str('f8') + b'\x89\x88\x87R',
                                     b'(' + _bin(1000) + b't', _bytes(b'\x00' * 8))),
    'ndarray_called.pkl': _p(_global('numpy', 'ndarray') + b'(' + b'(' + _bin(10) + b't' + _str('f8') + NONE +
                             _bin(0) + b'(' + _bin(0) + b't' + b'tR'),
    'reconstruct_strange.pkl': _p(_global('numpy.core.multiarray', '_reconstruct') + _global('builtins', 'list') +
                                  b'(' + _bin(5) + b't' + _bytes(b'b') + b'\x87R'),
    'structured_dtype.pkl': pickle.dumps([np.zeros(2, dtype=[('a', 'f8'), ('b', 'i4')])], protocol=2),
    'subarray_dtype.pkl': pickle.dumps([np.zeros(2, dtype=('f8', (3,)))], protocol=2)
    if False else pickle.dumps([np.zeros(2, dtype=np.dtype([('s', 'f8', (3,))]))], protocol=2),
    'datetime.pkl': pickle.dumps([np.zeros(2, dtype='M8[s]')], protocol=2),
    # memory bombs
    'memo_index.pkl': b'\x80\x04N' + b'r' + struct.pack('<I', 0x7fffffff) + b'.',
    'bytearray_length.pkl': _p(_global('builtins', 'bytearray') + b'(' + b'J\xff\xff\xff\x7f' + b'tR'),
    'list_range.pkl': _p(_global('builtins', 'list') + b'(' + _global('builtins', 'range') + b'(' +
                         b'J\xff\xff\xff\x7f' + b'tR' + b'tR'),
    'object_ndarray_length.pkl': _p(_array_of(DTYPE_O, b'(' + b'J\xff\xff\xff\x3f' + b't', b']')),
    'memo_nested_lists.pkl': _memo_nest(8, 60),
    # CPython 3.11 prints 'SystemError: deallocated bytearray object has exported buffers' when it cannot
    # allocate a BYTEARRAY8 (found by benchmarks/fuzz_loading.py): the child's stderr must not reach the user
    'bytearray8_huge.pkl': b'\x80\x05\x96' + (8977087483827262265).to_bytes(8, 'little') + b'xx.',
    'bytearray8_large.pkl': b'\x80\x05\x96' + (1 << 40).to_bytes(8, 'little') + b'xx.',
    'range_huge.pkl': _p(_list_of(_global('builtins', 'range') + b'(' + b'\x8a\x09' + (10 ** 20).to_bytes(9, 'little')
                                  + b'tR')),
    # hangs
    'colliding_keys.pkl': _colliding_dict(20000),
    'codec_other.pkl': _p(_global('_codecs', 'encode') + b'(' + _str('a' * 1000) + _str('punycode') + b'tR'),
    'huge_int_text.pkl': b'(I' + b'9' * 200000 + b'\nl.',
    # nesting and wrong types
    'deep_list.pkl': _deep_list(100000),
    'infos_int.pkl': pickle.dumps(5),
    'results_none.pkl': pickle.dumps(None),
    'cycle.pkl': b'\x80\x02]q\x00h\x00a.',
    # name allowlist
    'os_system.pkl': _p(_global('os', 'system') + b'(' + _str('echo PWNED') + b'tR'),
    'builtins_eval.pkl': _p(_global('builtins', 'eval') + b'(' + _str('1') + b'tR'),
    'masked.pkl': pickle.dumps([np.ma.masked_array([1.0])]),
    # malformed
    'empty.pkl': b'',
    'truncated.pkl': pickle.dumps([GT] * 3)[:150],
    'text.pkl': b'hello world\n',
    'not_npz.npz': b'PK\x03\x04garbage',
}


def _with(**changes):
    d = perfect(GT)
    d.update(changes)
    return d


def _results(**changes):
    res = {'boxes_3d': np.ones((2, 7)), 'scores_3d': np.ones(2) * 0.5, 'labels_3d': np.zeros(2, dtype=np.int64)}
    res.update(changes)
    return [res, res]


DT_CASES = {
    'dt_list_annos.pkl': [[1, 2, 3]],
    'dt_dict.pkl': {'a': 1},
    'dt_boxes_dict.pkl': [_with(location={'x': 1})],
    'dt_nested.pkl': [_with(location=[[[[[[[[[1.0]]]]]]]]])],
    'dt_nan.pkl': [_with(score=np.array([np.nan, 0.5]))],
    'dt_overflow.pkl': [_with(location=np.array([[1e308, 0, 20], [0, 0, 40]]) * 10)],
    'dt_int_overflow.pkl': [_with(score=[10 ** 400, 1])],
    'dt_str_names.pkl': [_with(name=12)],
}
RESULT_CASES = {
    'res_none.pkl': None,
    'res_int.pkl': 7,
    'res_boxes_dict.pkl': _results(boxes_3d={'a': 1}),
    'res_label_1e30.pkl': _results(labels_3d=np.array([1e30, 0])),
    'res_label_big_int.pkl': _results(labels_3d=[10 ** 30, 0]),
    'res_inf.pkl': _results(scores_3d=np.array([np.inf, 0.5])),
    'res_count.pkl': _results(scores_3d=np.ones(5)),
    'res_negative.pkl': _results(boxes_3d=-np.ones((2, 7))),
}


@pytest.fixture(scope='module')
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp('hostile')
    files = {}
    for name, data in CORPUS.items():
        files[name] = str(root / name)
        with open(files[name], 'wb') as f:
            f.write(data)
    for name, obj in list(DT_CASES.items()) + list(RESULT_CASES.items()):
        files[name] = str(root / name)
        with open(files[name], 'wb') as f:
            pickle.dump(obj, f, protocol=2)
    files['gt.pkl'] = str(root / 'gt.pkl')
    with open(files['gt.pkl'], 'wb') as f:
        pickle.dump([GT], f)
    files['dt_ok.pkl'] = str(root / 'dt_ok.pkl')
    with open(files['dt_ok.pkl'], 'wb') as f:
        pickle.dump([perfect(GT)], f)
    files['infos.pkl'] = str(root / 'infos.pkl')
    with open(files['infos.pkl'], 'wb') as f:
        pickle.dump([{'annos': {'name': np.array(['Sedan']), 'location': np.array([[10.0, 0, 0]]),
                                'dimensions': np.ones((1, 3)), 'rotation_y': np.zeros(1)}}] * 2, f)
    os.mkdir(str(root / 'a_directory'))
    files['a_directory'] = str(root / 'a_directory')
    for name, data in (('deep.json', b'[' * 100000 + b']' * 100000), ('latin1.json', b'["caf\xe9"]'),
                       ('bom.json', b'\xef\xbb\xbf[{"road_type": 1}]'), ('ints.json', b'[1, 2]'),
                       ('nan.json', b'[NaN]'), ('bigint.json', b'[' + b'9' * 100000 + b']')):
        files[name] = str(root / name)
        with open(files[name], 'wb') as f:
            f.write(data)
    files['cond_ints.pkl'] = str(root / 'cond_ints.pkl')
    with open(files['cond_ints.pkl'], 'wb') as f:
        pickle.dump([1, 2], f)
    return root, files


def _assert_one_line(proc, elapsed, shown, option):
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert 'Traceback' not in proc.stderr and 'PWNED' not in proc.stdout + proc.stderr
    assert len(lines) == 1 and lines[0].startswith('kradar-eval: error: '), proc.stderr[-2000:]
    assert shown in lines[0] and option in lines[0], lines[0]
    assert elapsed < SECONDS + 60, elapsed


@pytest.mark.parametrize('name', sorted(CORPUS) + sorted(DT_CASES) + ['a_directory'])
def test_hostile_detections_file(corpus, name):
    root, files = corpus
    proc, elapsed = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', files[name]], str(root))
    _assert_one_line(proc, elapsed, repr(files[name]), '--dt-annos')
    if name == 'a_directory':
        assert 'is a directory' in proc.stderr


@pytest.mark.parametrize('name', sorted(RESULT_CASES) + ['colliding_keys.pkl', 'object_dtype_fields.pkl'])
def test_hostile_results_file(corpus, name):
    root, files = corpus
    proc, elapsed = _run(['--infos', files['infos.pkl'], '--results', files[name]], str(root))
    _assert_one_line(proc, elapsed, repr(files[name]), '--results')
    if name == 'res_label_1e30.pkl':
        assert 'labels_3d[0] = 1e+30' in proc.stderr and 'results[0]' in proc.stderr
    if name == 'colliding_keys.pkl':
        assert 'time limit of {} s'.format(SECONDS) in proc.stderr or 'expected a list' in proc.stderr


@pytest.mark.parametrize('name', ['deep.json', 'latin1.json', 'bom.json', 'ints.json', 'nan.json', 'bigint.json',
                                  'cond_ints.pkl', 'object_dtype_fields.pkl', 'a_directory'])
def test_hostile_conditions_file(corpus, name):
    root, files = corpus
    proc, elapsed = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', files['dt_ok.pkl'], '--conditions',
                          files[name]], str(root))
    _assert_one_line(proc, elapsed, repr(files[name]), '--conditions')


def test_compare_dt_annos_is_named_as_such(corpus):
    root, files = corpus
    dt = files['dt_ok.pkl']
    proc, elapsed = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', dt, '--compare-dt-annos',
                          files['dt_nan.pkl']], str(root))
    _assert_one_line(proc, elapsed, repr(files['dt_nan.pkl']), '--compare-dt-annos')
    assert "--dt-annos '" + files['dt_nan.pkl'] not in proc.stderr


def test_memory_limit_and_crash_are_named(corpus, tmp_path):
    """A file that needs more memory than the limit names the limit; a reader killed by a signal other than
    the time limit is named a crash (simulated by a trusted pickle that kills its own process)."""
    root, files = corpus
    big = str(tmp_path / 'big.pkl')
    with open(big, 'wb') as f:
        pickle.dump([_with(score=np.ones(2))] + [np.zeros(3000000)] * 0, f)
    proc, elapsed = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', files['memo_index.pkl'],
                          '--max-memory-mb', '64'], str(root))
    _assert_one_line(proc, elapsed, repr(files['memo_index.pkl']), '--dt-annos')
    assert 'memory' in proc.stderr


def test_refusals_keep_their_wording(corpus):
    root, files = corpus
    proc, _ = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', files['os_system.pkl']], str(root))
    assert 'refused to load os.system' in proc.stderr and '--trust-pickle' in proc.stderr
    proc, _ = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', files['truncated.pkl']], str(root))
    assert 'cannot read the pickle' in proc.stderr


def test_the_pickle_opcodes_are_what_the_names_say():
    """The hand-written streams parse as pickles (so each test exercises the loader, not a parse error)."""
    for name in ('object_dtype_fields.pkl', 'memo_nested_lists.pkl', 'colliding_keys.pkl', 'cycle.pkl'):
        list(pickletools.genops(CORPUS[name]))
    _ = frame


def _has_matplotlib():
    import importlib.util
    return importlib.util.find_spec('matplotlib') is not None


@pytest.mark.skipif(not hasattr(os, 'symlink'), reason='needs symbolic links')
def test_outputs_never_write_through_planted_links(corpus, tmp_path):
    """--export, --json and --plot-dir write fixed names into a user's folder: a link planted at such a name
    is replaced by the new file, the file it points to is untouched, and no temporary file is left."""
    root, files = corpus
    victim = tmp_path / 'victim.txt'
    victim.write_text('keep')
    export, plots, scratch = tmp_path / 'export', tmp_path / 'plots', tmp_path / 'scratch'
    export.mkdir()
    for name in ('gt.npz', 'dt_ok.npz'):
        os.symlink(str(victim), str(export / name))
    metrics = tmp_path / 'metrics.json'
    os.symlink(str(victim), str(metrics))
    args = ['--gt-annos', files['gt.pkl'], '--dt-annos', files['dt_ok.pkl'], '--export', str(export),
            '--json', str(metrics)]
    if _has_matplotlib():       # the plot names, learnt from a first run, planted as links
        proc, _ = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', files['dt_ok.pkl'], '--plot-dir', str(scratch)],
                       str(root))
        assert proc.returncode == 0, proc.stderr[-2000:]
        plots.mkdir()
        for name in os.listdir(str(scratch)):
            os.symlink(str(victim), str(plots / name))
        args += ['--plot-dir', str(plots)]
    proc, _ = _run(args, str(root))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert victim.read_text() == 'keep'
    outputs = [export / 'gt.npz', export / 'dt_ok.npz', metrics] + (
        [plots / n for n in os.listdir(str(scratch))] if _has_matplotlib() else [])
    for path in outputs:
        assert os.path.isfile(str(path)) and not os.path.islink(str(path)), path
    for name in ('gt.npz', 'dt_ok.npz'):
        with np.load(str(export / name), allow_pickle=False) as content:
            assert 'offsets' in content.files
    import json
    with open(str(metrics)) as f:
        assert 'metrics' in json.load(f)
    if _has_matplotlib():
        assert all((plots / n).read_bytes()[:4] == b'\x89PNG' for n in os.listdir(str(plots)))
    for folder in (export, tmp_path) + ((plots,) if _has_matplotlib() else ()):
        assert not [n for n in os.listdir(str(folder)) if n.endswith('.tmp')], os.listdir(str(folder))


@pytest.mark.parametrize('option', ['--export', '--json', '--plot-dir'])
def test_output_where_a_file_stands(corpus, tmp_path, option):
    """An output folder that is a file: exit 2 and one error line naming it, after the evaluation."""
    root, files = corpus
    if option == '--plot-dir' and not _has_matplotlib():
        pytest.skip('--plot-dir needs matplotlib')
    blocker = tmp_path / 'a_file'
    blocker.write_text('x')
    target = str(blocker / 'metrics.json') if option == '--json' else str(blocker)
    proc, elapsed = _run(['--gt-annos', files['gt.pkl'], '--dt-annos', files['dt_ok.pkl'], option, target], str(root))
    lines = [l for l in proc.stderr.splitlines() if l.startswith('kradar-eval: error: ')]
    assert proc.returncode == 2 and len(lines) == 1 and str(blocker) in lines[0], proc.stderr[-2000:]
    assert 'Traceback' not in proc.stderr and blocker.read_text() == 'x'
