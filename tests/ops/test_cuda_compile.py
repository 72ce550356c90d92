"""The numba-CUDA kernel compiles without a driver and computes what the CPU backends compute.

- Its pair-intersection lines are clamp_kernel.pair_intersection's, character for character (the kernel writes
  them out because numba >= 0.58 compiles every called device function, min/max included, for the current
  device, which needs a driver).
- numba compiles it to PTX here, on a machine without a GPU, and the toolkit's ptxas to SASS: numba 0.48
  through compile_kernel + libNVVM, newer numba through compile_ptx (tests/doctor/test_cuda_compile.py runs it
  against each registry toolkit and numba 0.56).
- Under numba's CUDA simulator its output equals the numba-CPU backend's to the last bits of cos/sin (same float64
  operations in the same order) and the numpy backend's to rounding.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.ops import reference
from tests.ops.cases import CASES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEGIN, END = '# pair-intersection body: begin', '# pair-intersection body: end'


def body(path):
    """The dedented lines between the markers of ``path``."""
    with open(path) as f:
        text = f.read()
    start = text.index(BEGIN)
    start = text.rindex('\n', 0, start) + 1
    stop = text.index('\n', text.index(END))
    return textwrap.dedent(text[start:stop])


def test_kernel_carries_the_clamp_body_unchanged():
    ops = os.path.join(ROOT, 'kradar_plugin', 'ops')
    ours = body(os.path.join(ops, 'cuda_kernel.py'))
    assert ours == body(os.path.join(ops, 'clamp_kernel.py'))
    assert 'twice' in ours and 'area = ' in ours and len(ours.splitlines()) > 50
    assert 'min(' not in ours and 'max(' not in ours   # the calls numba >= 0.58 compiles for the current device


COMPILE = r'''
import json, sys
from kradar_plugin.doctor.probes.cuda_compile_child import OURS, compile_one, find_toolkit
import importlib
module, name, sig = OURS
func = getattr(importlib.import_module(module), name)
toolkit = find_toolkit(60)
rows = [] if toolkit.get('error') else [compile_one('ours', func, sig, {}, arch, toolkit, 120, False)
                                        for arch in sys.argv[1:]]
print(json.dumps({'toolkit': toolkit, 'rows': rows}))
'''


def test_compiles_to_ptx_and_sass_without_a_driver():
    """With the machine's toolkit (no driver here); numba >= 0.57 must compile it: the backend supports them."""
    numba = pytest.importorskip('numba')
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop('NUMBA_ENABLE_CUDASIM', None)
    proc = subprocess.run([sys.executable, '-c', COMPILE, 'sm_80', 'sm_90'], env=env, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    if out['toolkit'].get('error'):
        pytest.skip('numba %s finds no usable libNVVM here: %s' % (numba.__version__, out['toolkit']['error']))
    from kradar_plugin.facts import numba_toolkit_findings
    refused = [f for f in numba_toolkit_findings(numba.__version__, out['toolkit']['version']) if f.status == 'FAIL']
    for row in out['rows']:
        if refused:   # e.g. numba 0.48 with CUDA >= 11.2: the facts' refusal, in NVVM's words
            assert row['status'] == 'fail' and 'parse expected comma' in row['error'], row
        else:
            assert row['status'] == 'ok' and 'CudaSupportError' not in str(row), row
            assert row['stage'] == ('sass' if out['toolkit'].get('ptxas') else 'ptx')
            assert row['ptx-target'] == row['arch']


SIMULATED = r'''
import json, sys
import numpy as np
from kradar_plugin.ops import backend_numba_cuda
cases = json.load(open(sys.argv[1]))
out = {}
for name, (b, q) in cases.items():
    b, q = np.asarray(b, dtype=np.float64).reshape(-1, 5), np.asarray(q, dtype=np.float64).reshape(-1, 5)
    out[name] = backend_numba_cuda.intersection_areas(b, q).tolist()
json.dump(out, open(sys.argv[2], 'w'))
'''


def test_simulated_kernel_equals_the_cpu_backends(tmp_path):
    pytest.importorskip('numba')
    from kradar_plugin.ops import backend_numba_cpu, backend_numpy
    rng = np.random.RandomState(7)
    cases = {name: [np.asarray(b, dtype=np.float64).tolist(), np.asarray(q, dtype=np.float64).tolist()]
             for name, (b, q) in CASES.items()}
    cases['random'] = [reference.random_boxes(rng, 70).tolist(), reference.random_boxes(rng, 66).tolist()]
    src, dst = tmp_path / 'cases.json', tmp_path / 'out.json'
    src.write_text(json.dumps(cases))
    env = dict(os.environ, PYTHONPATH=ROOT, NUMBA_ENABLE_CUDASIM='1')
    proc = subprocess.run([sys.executable, '-c', SIMULATED, str(src), str(dst)], env=env, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(dst.read_text())
    for name, (b, q) in cases.items():
        b = np.asarray(b, dtype=np.float64).reshape(-1, 5)
        q = np.asarray(q, dtype=np.float64).reshape(-1, 5)
        simulated = np.asarray(got[name]).reshape(len(b), len(q))
        cpu = backend_numba_cpu.intersection_areas(b, q)
        # the CPU backend skips pairs whose circumscribed circles are apart (0 there; the kernel's rounding
        # residue of a disjoint pair is ~1e-16)
        reach = 0.5 * (np.hypot(b[:, 2], b[:, 3])[:, None] + np.hypot(q[:, 2], q[:, 3])[None, :])
        meet = (b[:, None, 0] - q[None, :, 0]) ** 2 + (b[:, None, 1] - q[None, :, 1]) ** 2 <= reach ** 2
        # the same float64 operations in the same order; cos/sin come from Python's math in the simulator,
        # numpy on the CPU (libdevice on a GPU), which may differ in the last bit
        assert np.allclose(simulated[meet], cpu[meet], rtol=1e-14, atol=1e-14), \
            (name, np.abs(simulated - cpu)[meet].max())
        assert np.abs(simulated[~meet]).max(initial=0.0) <= 1e-12, name
        assert np.abs(simulated - backend_numpy.intersection_areas(b, q)).max() <= 1e-12, name
