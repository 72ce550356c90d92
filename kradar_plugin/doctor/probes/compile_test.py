"""``--compile-test``: compile (and, with a GPU, run) a tiny numba.cuda kernel in a subprocess.

A subprocess because the failures being looked for include segfaults (driver >= 580 with numba < 0.63) and
hangs; the real exception's last line is reported, not a guess from version numbers.
"""
import json
import subprocess
import sys

_SCRIPT = r'''
import json
out = {}
try:
    import numpy as np
    from numba import cuda

    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = 2 * a[i]

    sig = 'void(float32[:])'
    if hasattr(cuda, 'compile_ptx'):
        # The GPU's own compute capability; without a GPU sm_75 (the oldest CUDA 13 accepts), then sm_52
        # (the oldest numba 0.5x targets by default) for toolkits that predate sm_75.
        ccs = [cuda.get_current_device().compute_capability] if cuda.is_available() else [(7, 5), (5, 2)]
        first_error = None
        for cc in ccs:
            try:
                ptx, _ = cuda.compile_ptx(double, sig, cc=cc)
            except Exception as e:
                first_error = first_error or e
                continue
            out['ptx_bytes'] = len(ptx)
            out['cc'] = '%d.%d' % tuple(cc)
            break
        else:
            raise first_error
    if cuda.is_available():
        kernel = cuda.jit(sig)(double)
        a = np.arange(64, dtype=np.float32)
        d = cuda.to_device(a)
        kernel[1, 64](d)
        ok = bool((d.copy_to_host() == 2 * a).all())
        out['ran_on_gpu'] = ok
        out['status'] = 'ok' if ok else 'fail'
        if not ok:
            out['detail'] = 'the kernel ran but returned wrong values'
    elif 'ptx_bytes' in out:
        out['status'] = 'ok'
        out['detail'] = 'compiled to PTX for sm_%s; no GPU to run it on' % out['cc'].replace('.', '')
    else:
        out['status'] = 'fail'
        out['detail'] = 'numba.cuda has no compile_ptx and no GPU is available'
except BaseException as e:
    out['status'] = 'fail'
    lines = [l.strip() for l in str(e).splitlines() if l.strip()]
    out['detail'] = ('%s: %s' % (type(e).__name__, ' / '.join(lines)))[:400]
print('KRADAR_COMPILE_JSON ' + json.dumps(out))
'''


def run_compile_test(python=None, timeout=300):
    """('ok'|'fail', detail) from compiling a numba.cuda kernel in a fresh interpreter."""
    cmd = [python or sys.executable, '-c', _SCRIPT]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              universal_newlines=True)
    except subprocess.TimeoutExpired:
        return 'fail', 'compiling the test kernel took longer than %d s' % timeout
    for line in proc.stdout.splitlines():
        if line.startswith('KRADAR_COMPILE_JSON '):
            out = json.loads(line[len('KRADAR_COMPILE_JSON '):])
            detail = out.get('detail') or ('ran on the GPU' if out.get('ran_on_gpu') else 'compiled')
            return out['status'], detail
    tail = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode < 0:
        return 'fail', 'the compile subprocess died with signal %d (%s)' % (-proc.returncode,
                                                                            tail[-1] if tail else 'no output')
    return 'fail', 'exit code %s: %s' % (proc.returncode, tail[-1] if tail else 'no output')
