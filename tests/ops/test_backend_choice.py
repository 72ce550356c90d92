"""Backend choice: overrides, explicit-request errors, the one-warning fallback, CUDA under the
simulator (and on a real GPU when there is one). Each scenario runs in a fresh interpreter because the
choice is made once per process."""
import json
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kradar_plugin.ops import backend_choice as guard, rotate_iou_eval
from tests.ops import reference
from tests.ops.cases import CASES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code, env=None, timeout=300):
    full_env = dict(os.environ)
    for var in ('KRADAR_IOU_BACKEND', 'KRADAR_EVAL_NO_NUMBA', 'NUMBA_ENABLE_CUDASIM'):
        full_env.pop(var, None)
    full_env.update(env or {})
    full_env['PYTHONPATH'] = ROOT + os.pathsep + full_env.get('PYTHONPATH', '')
    proc = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], env=full_env, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=timeout)
    return proc


CHOICE = '''
import warnings, json
warnings.simplefilter('always')
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    from kradar_plugin.ops import rotate_iou_eval, backend_choice as guard
    from kradar_plugin.ops.numba_gate import FallbackWarning
    for _ in range(3):
        iou = rotate_iou_eval([[0, 0, 2, 2, 0]], [[1, 0, 2, 4, 0]])
print(json.dumps({'backend': guard.select().name, 'iou': float(iou[0, 0]),
                  'warnings': [str(w.message) for w in caught if issubclass(w.category, FallbackWarning)]}))
'''


def choice(env=None):
    proc = run_python(CHOICE, env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_automatic_choice_on_a_machine_without_gpu_is_quiet():
    if guard.nvidia_driver_version() is not None:
        pytest.skip('this machine has an NVIDIA driver')
    pytest.importorskip('numba')
    got = choice()
    assert got == {'backend': 'numba', 'iou': pytest.approx(0.2, abs=1e-12), 'warnings': []}


@pytest.mark.parametrize('name', ['numpy', 'numba'])
def test_environment_variable_overrides(name):
    if name == 'numba':
        pytest.importorskip('numba')
    assert choice({'KRADAR_IOU_BACKEND': name})['backend'] == name


def test_explicit_unavailable_backend_is_an_error():
    if guard.nvidia_driver_version() is not None:
        pytest.skip('this machine has an NVIDIA driver')
    with pytest.raises(guard.BackendUnavailable, match="'cuda' unavailable: no NVIDIA driver found"):
        rotate_iou_eval([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]], backend='cuda')
    proc = run_python('from kradar_plugin.ops import rotate_iou_eval\n'
                      'rotate_iou_eval([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]])', {'KRADAR_IOU_BACKEND': 'cuda'})
    assert proc.returncode == 1 and 'BackendUnavailable' in proc.stderr and 'no NVIDIA driver' in proc.stderr


def test_unknown_backend_name():
    with pytest.raises(ValueError, match="unknown rotated-IoU backend 'gpu'"):
        rotate_iou_eval([[0, 0, 1, 1, 0]], [[0, 0, 1, 1, 0]], backend='gpu')


def test_broken_cuda_falls_back_with_one_warning(tmp_path):
    """A machine that reports an NVIDIA driver (an ``nvidia-smi`` on PATH answering 580.65.06) but where
    numba's CUDA target cannot run: the automatic choice must warn once, name the cause, and still
    compute with a CPU backend."""
    numba = pytest.importorskip('numba')
    if guard.nvidia_driver_version() is not None:
        pytest.skip('this machine has a real NVIDIA driver')
    smi = tmp_path / 'nvidia-smi'
    smi.write_text('#!/bin/sh\necho 580.65.06\n')
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    got = choice({'PATH': str(tmp_path) + os.pathsep + os.environ['PATH']})
    assert got['backend'] == 'numba' and got['iou'] == pytest.approx(0.2, abs=1e-12)
    assert len(got['warnings']) == 1, got['warnings']
    message = got['warnings'][0]
    assert "uses the numba backend: rotated-IoU backend 'cuda' unavailable" in message
    from kradar_plugin.facts.versions import parse_version
    if parse_version(numba.__version__) < parse_version('0.63'):
        assert '580' in message and '0.63' in message   # the driver rule of the shared facts table
    else:
        assert 'no usable CUDA GPU' in message or 'Error' in message


def test_numba_missing_falls_back_to_numpy_quietly(tmp_path):
    """numba is optional: with it unimportable the numpy backend is used without a warning."""
    blocker = tmp_path / 'sitecustomize.py'
    blocker.write_text(textwrap.dedent('''
        import sys
        class _Block(object):
            def find_spec(self, name, path=None, target=None):
                if name == 'numba' or name.startswith('numba.'):
                    raise ModuleNotFoundError('No module named %r' % name, name=name)   # as if not installed
        sys.meta_path.insert(0, _Block())
    '''))
    got = choice({'PYTHONPATH': str(tmp_path)})
    assert got == {'backend': 'numpy', 'iou': pytest.approx(0.2, abs=1e-12), 'warnings': []}


CUDA_CASES = '''
import json, sys, numpy as np
from kradar_plugin.ops import rotate_iou_eval
cases = json.load(open(sys.argv[1]))
out = {name: [rotate_iou_eval(c[0], c[1], k, backend='cuda').tolist() for k in (-1, 0, 1, 2)]
       for name, c in cases.items()}
json.dump(out, open(sys.argv[2], 'w'))
'''


def _cuda_results(tmp_path, env):
    pytest.importorskip('numba')
    rng = np.random.RandomState(3)
    cases = {name: [np.asarray(b).tolist(), np.asarray(q).tolist()] for name, (b, q) in CASES.items()}
    # Spans two 64-thread blocks in each direction.
    cases['random'] = [reference.random_boxes(rng, 70).tolist(), reference.random_boxes(rng, 66).tolist()]
    src, dst = tmp_path / 'cases.json', tmp_path / 'out.json'
    src.write_text(json.dumps(cases))
    script = tmp_path / 'run.py'
    script.write_text(CUDA_CASES)
    full_env = dict(os.environ, PYTHONPATH=ROOT, **env)
    full_env.pop('KRADAR_IOU_BACKEND', None)
    proc = subprocess.run([sys.executable, str(script), str(src), str(dst)], env=full_env, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(dst.read_text())
    for name, (b, q) in cases.items():
        for k, criterion in enumerate((-1, 0, 1, 2)):
            want = reference.overlaps(b, q, criterion)
            assert np.abs(np.asarray(got[name][k]) - want).max() <= 1e-6, (name, criterion)


def test_cuda_backend_in_simulator(tmp_path):
    _cuda_results(tmp_path, {'NUMBA_ENABLE_CUDASIM': '1'})


@pytest.mark.skipif(guard.nvidia_driver_version() is None, reason='no NVIDIA GPU on this machine')
def test_cuda_backend_on_real_gpu(tmp_path):
    _cuda_results(tmp_path, {})
