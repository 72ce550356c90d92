"""``--compile-test``: compile mmdet3d's and the plugin's rotated-IoU kernels with NVIDIA's compilers, in a child.

A child (``cuda_compile_child``) because the failures looked for include segfaults (driver >= 580 with numba <
0.63) and hangs of libNVVM or ptxas; it is bounded by ``timeout``, ptxas by ``ptxas_timeout``. No GPU is
needed: each kernel goes through libNVVM to PTX and the toolkit's ptxas to SASS for each architecture; with a
GPU the plugin's kernel also runs and is compared with the numpy backend. The judge is
``doctor/rules/numba.py:compile_test``.
"""
import json
import os
import subprocess
import sys

from .cuda_compile_child import MARK


def cuda_home_problem(env=None):
    """One line when ``CUDA_HOME`` cannot be a CUDA toolkit (a file, or no nvvm/ and no libNVVM), else None."""
    home = (env if env is not None else os.environ).get('CUDA_HOME')
    if not home:
        return None
    if not os.path.exists(home):
        return 'CUDA_HOME=%s does not exist' % home
    if not os.path.isdir(home):
        return 'CUDA_HOME=%s is a file, not a CUDA toolkit folder' % home
    if not os.path.isdir(os.path.join(home, 'nvvm')):
        return 'CUDA_HOME=%s has no nvvm/ folder (libNVVM, libdevice): not a CUDA toolkit' % home
    return None


def run_compile_test(archs, python=None, timeout=900, ptxas_timeout=120, env=None, ptx_dir=None, only=None):
    """The child's report as a dict: 'status' ('ok' | 'fail'), 'detail' (one line when the child itself failed),
    'numba', 'toolkit' {root, version, libnvvm, ptxas, ...}, 'rows' (one per kernel x architecture: status,
    stage 'load' | 'ptx' | 'sass', ptx-version, error or detail), 'gpu-run' (None without a GPU). ``ptx_dir``:
    keep each PTX there (row 'ptx-file'); ``only``: 'mmdet3d' or 'kradar_plugin' alone."""
    env = dict(os.environ if env is None else env)
    env.setdefault('KRADAR_PLUGIN_REGISTER', '0')   # the child needs no framework (mmcv and torch stay out)
    problem = cuda_home_problem(env)
    if problem:
        return {'status': 'fail', 'detail': problem, 'rows': [], 'archs': list(archs)}
    args = json.dumps({'archs': list(archs), 'ptxas_timeout': ptxas_timeout, 'ptx_dir': ptx_dir, 'only': only})
    cmd = [python or sys.executable, '-m', 'kradar_plugin.doctor.probes.cuda_compile_child', args]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              universal_newlines=True, env=env)
    except subprocess.TimeoutExpired:
        return {'status': 'fail', 'detail': 'the compile child did not finish within %g s' % timeout, 'rows': [],
                'archs': list(archs)}
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            doc = json.loads(line[len(MARK):])
            failed = doc.get('error') or any(r['status'] != 'ok' for r in doc['rows']) or \
                (doc.get('gpu-run') or {}).get('status') == 'fail'
            doc['status'] = 'fail' if failed else 'ok'
            if doc.get('error'):
                doc['detail'] = doc['error']
            return doc
    tail = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode < 0:
        detail = 'the compile child died with signal %d (%s)' % (-proc.returncode, tail[-1] if tail else 'no output')
    else:
        detail = 'the compile child exited with status %s: %s' % (proc.returncode, tail[-1] if tail else 'no output')
    return {'status': 'fail', 'detail': detail, 'rows': [], 'archs': list(archs)}
