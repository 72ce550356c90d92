"""Facts that need torch/numba/numpy/mmcv imported: in a fresh interpreter (``framework_probe``: a broken
build or a segfault cannot take the doctor down), or from what the caller already imported (quick mode)."""
import json
import subprocess
import sys


# Run in a subprocess by framework_probe: imports what it is asked to and prints one JSON line.
_FRAMEWORK_SCRIPT = r'''
import json, sys
want = set(sys.argv[1].split(','))
out = {}
def err(e):
    return ('%s: %s' % (type(e).__name__, e)).strip().splitlines()[-1][:300]
if 'numpy' in want:
    try:
        import numpy; out['numpy-runtime'] = numpy.__version__
    except Exception as e:
        out['numpy-import'] = err(e)
if 'numba' in want:
    try:
        import numba; out['numba-import'] = 'ok'; out['numba-runtime'] = numba.__version__
    except Exception as e:
        out['numba-import'] = err(e)
if 'torch' in want:
    try:
        import torch
        out['torch-runtime'] = torch.__version__
        out['torch-cuda'] = torch.version.cuda or 'cpu'
        import torch.multiprocessing as mp
        out['sharing-strategy'] = mp.get_sharing_strategy()
        if torch.cuda.is_available():
            n = torch.cuda.device_count()
            out['gpus'] = n
            out['gpu-cc'] = ['%d.%d' % torch.cuda.get_device_capability(i) for i in range(n)]
            out['torch-arch'] = list(torch.cuda.get_arch_list())
        else:
            out['torch-cuda-available'] = False
    except Exception as e:
        out['torch-import'] = err(e)
if 'mmcv' in want:
    try:
        import mmcv._ext  # noqa: F401
        out['mmcv-ext'] = 'ok'
    except Exception as e:
        out['mmcv-ext'] = err(e)
    try:
        from mmcv.ops import get_compiling_cuda_version
        out['mmcv-cuda'] = get_compiling_cuda_version()
    except Exception:
        pass
print('KRADAR_DOCTOR_JSON ' + json.dumps(out))
'''


def framework_probe(want, python=None, timeout=300):
    """Import ``want`` (subset of numpy, numba, torch, mmcv) in a fresh interpreter and report facts.

    Returns a dict; on a crash or timeout it holds 'probe-error' with the last stderr line."""
    if not want:
        return {}
    cmd = [python or sys.executable, '-c', _FRAMEWORK_SCRIPT, ','.join(sorted(want))]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              universal_newlines=True)
    except subprocess.TimeoutExpired:
        return {'probe-error': 'importing %s took longer than %d s' % (', '.join(sorted(want)), timeout)}
    except OSError as e:
        return {'probe-error': str(e)}
    for line in proc.stdout.splitlines():
        if line.startswith('KRADAR_DOCTOR_JSON '):
            return json.loads(line[len('KRADAR_DOCTOR_JSON '):])
    tail = [l for l in proc.stderr.splitlines() if l.strip()]
    return {'probe-error': 'importing %s exited with %s: %s' % (', '.join(sorted(want)), proc.returncode,
                                                                tail[-1] if tail else 'no output')}


def loaded_framework_facts():
    """The framework facts available from modules the caller already imported (no new imports)."""
    out = {}
    numpy = sys.modules.get('numpy')
    if numpy is not None and getattr(numpy, '__version__', None):
        out['numpy-runtime'] = numpy.__version__
    torch = sys.modules.get('torch')
    if torch is not None and getattr(torch, 'version', None) is not None:
        out['torch-runtime'] = torch.__version__
        out['torch-cuda'] = torch.version.cuda or 'cpu'
        try:
            out['sharing-strategy'] = torch.multiprocessing.get_sharing_strategy()
        except Exception:
            pass
    if 'mmcv._ext' in sys.modules:
        out['mmcv-ext'] = 'ok'
    return out
