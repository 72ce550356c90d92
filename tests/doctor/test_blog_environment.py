"""The K-Radar/EchoFusion blog's environment must yield exactly the failures that user hit, nothing else.

Planned environment (issue 5): python 3.7.16, torch 1.10.0, CUDA 11.3, mmcv-full 1.4.0, mmdet 2.19.0,
mmseg 0.20.0, mmdet3d 0.17.3, numba 0.48.0, numpy 1.20.3 (= numpy-base), yapf 0.40.2. Expected, from the facts:

FAIL numba-numpy: numba <= 0.50.x wheels on numpy >= 1.20 raise "expected dtype object, got
    'numpy.dtype[float64]'" (rotate-iou.md failure mode 7; fixed in numba 0.51.0). 0.48.0 <= 0.50, 1.20.3 >= 1.20.
FAIL numba-cuda: numba <= 0.52 with a CUDA >= 11.2 toolkit -> NvvmError "parse expected comma after load's
    type" (failure mode 1). 0.48.0 <= 0.52, 11.3 >= 11.2.
FAIL yapf: yapf >= 0.40.2 with mmcv < 1.7.2 -> "FormatCode() got an unexpected keyword argument 'verify'"
    (environment.md section 3). 0.40.2 >= 0.40.2, 1.4.0 < 1.7.2.
Not failures:
- mmdet3d 0.17.3's requirements pin numpy<1.20 (and numba==0.48.0): the violated pin IS the numba/numpy FAIL
  above, so it is named in that finding's fix rather than reported twice.
- mmcv ranges: mmdet 2.19 asserts mmcv-full 1.3.8..1.5.0; mmdet3d 0.17.3 asserts mmcv 1.3.8..1.5.0, mmdet
  2.14.0..3.0.0, mmseg 0.14.1..1.0.0 -> 1.4.0, 2.19.0, 0.20.0 all pass (section 3 tables, asserts use <=).
- numba 0.48 supports Python 3.6-3.8 (compat matrix) -> 3.7.16 is fine; numpy == numpy-base.
- No driver/GPU facts were given (and none on the test machine is used): driver/GPU checks are skipped.

The numba-cuda fact is then checked against NVIDIA's compiler: numba 0.48 and CUDA 11.8's libNVVM (a registry
wheel) compile mmdet3d's kernel into the blog's very error, which the doctor names with the same fix.
"""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from kradar_plugin.doctor import run_checks, format_report

from .helpers import BLOG, MACHINE_INDEPENDENT, by_status, judge, result

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

EXPECTED_FAILS = ['numba-cuda', 'numba-numpy', 'yapf']


def test_blog_environment_pure_rules():
    results = judge(BLOG)
    assert by_status(results, 'FAIL') == EXPECTED_FAILS
    assert by_status(results, 'WARN') == []
    assert "numpy.dtype[float64]" in result(results, 'numba-numpy').reason
    assert "numba>=0.53" in result(results, 'numba-cuda').fix
    assert "parse expected comma" in result(results, 'numba-cuda').reason
    assert result(results, 'yapf').fix == "pip install 'yapf==0.40.1'"
    assert result(results, 'mmcv-range').status == 'OK'


def test_blog_environment_through_run_checks():
    """Same through the public API, with this machine's installed packages present but overridden."""
    results = run_checks(assume=BLOG, quick=True, probes=MACHINE_INDEPENDENT)
    assert by_status(results, 'FAIL') == EXPECTED_FAILS
    assert by_status(results, 'WARN') == []
    text = format_report(results, statuses=('FAIL',))
    lines = text.splitlines()
    assert sum(l.startswith('FAIL ') for l in lines) == 3 and text.count('fix: ') == 3
    assert 'kradar-doctor: FAIL (3 fail' in text


def test_suggested_fixes_clear_the_blog_failures():
    """Applying the three fixes (numba 0.53, yapf 0.40.1) leaves no FAIL: the fixes are consistent."""
    fixed = BLOG.replace('numba=0.48.0', 'numba=0.53.0').replace('yapf=0.40.2', 'yapf=0.40.1')
    assert by_status(judge(fixed), 'FAIL') == []


def test_conda_numpy_record_vs_numpy_base():
    """numpy=1.19.5 pinned, but numpy-base 1.20.3 is what imports (conda#7481): the mismatch itself FAILs, and
    numba 0.48 still meets numpy 1.20.3 -> the dtype TypeError, explained as coming from numpy-base."""
    results = judge('python=3.7.16,numba=0.48.0,numpy=1.19.5,numpy-base=1.20.3')
    assert by_status(results, 'FAIL') == ['numba-numpy', 'numpy-base']
    assert 'numpy-base' in result(results, 'numba-numpy').reason
    assert result(results, 'numpy-base').fix == 'conda install numpy=1.19.5 numpy-base=1.19.5'
    # The consistent pin is clean.
    assert by_status(judge('python=3.7.16,numba=0.48.0,numpy=1.19.5,numpy-base=1.19.5'), 'FAIL') == []


# ---- the blog's NvvmError, compiled for real (no GPU): EchoFusion's numba 0.48 with CUDA 11.8's libNVVM

def _toolchain(*args):
    """tools/cuda_toolchain.py's answer (a folder or a python); skip with its reason when it has none."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'cuda_toolchain.py')] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=1800)
    if proc.returncode == 3:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_blog_nvvm_error_reproduced_and_named_with_its_fix():
    """kradar-doctor --compile-test on numba 0.48 (this stack's, else a cached venv with EchoFusion's pins) and
    CUDA 11.8 compiles mmdet3d's rotate_iou kernel (the installed mmdet3d's, else 1.4.0's files: the kernel is
    the same) and prints the blog's error; the numba-cuda fact quotes the same words, the fix is the fact's."""
    try:
        import numba
        python = sys.executable if numba.__version__ == '0.48.0' else None
    except ImportError:
        python = None
    python = python or _toolchain('numba', '0.48.0')
    home = _toolchain('toolkit', '11.8')
    path = [ROOT]
    if importlib.util.find_spec('mmdet3d') is None or python != sys.executable:
        path.append(_toolchain('mmdet3d', '1.4.0'))
    env = dict(os.environ, CUDA_HOME=home, LD_LIBRARY_PATH=os.path.join(home, 'nvvm', 'lib64'),
               PYTHONPATH=os.pathsep.join(path), PYTHONWARNINGS='ignore')
    proc = subprocess.run([python, '-m', 'kradar_plugin.doctor', '--compile-test', '--gpu-arch', 'sm_75', '--json'],
                          env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=900)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc['facts']['numba'] == '0.48.0' and doc['facts']['cuda'] == '11.8'
    blog = "parse expected comma after load's type"
    mmdet3d = [c for c in doc['checks'] if c['name'] == 'cuda-compile' and c['reason'].startswith('mmdet3d')]
    assert mmdet3d and mmdet3d[0]['status'] == 'FAIL', doc['checks']
    assert 'NvvmError: Failed to compile <unnamed>' in mmdet3d[0]['reason'] and blog in mmdet3d[0]['reason']
    assert 'CUDA 11.8 at %s' % home in mmdet3d[0]['reason']
    fact = result(judge('numba=0.48.0,cuda=11.8'), 'numba-cuda')
    live = [c for c in doc['checks'] if c['name'] == 'numba-cuda'][0]
    assert fact.status == live['status'] == 'FAIL' and blog in fact.reason and blog in live['reason']
    assert mmdet3d[0]['fix'].startswith(fact.fix) and 'import kradar_plugin' in mmdet3d[0]['fix']
