"""Judges of the numba checks: numba against Python, numpy, the CUDA toolkit, the driver and libNVVM, and the
``--compile-test`` outcome. The version boundaries live in kradar_plugin.facts.numba."""
from ... import facts as F
from ..report import Finding
from .gpu import has_gpu


def uses_cuda(facts):
    """Whether numba's CUDA target will be exercised: a GPU here, or a planned (assumed) CUDA/driver."""
    assumed = facts.get('assumed', ())
    return has_gpu(facts) or 'cuda' in assumed or 'driver' in assumed


def numba_python(facts):
    return F.numba_python_findings(facts['numba'], facts.get('python'))


def numba_numpy(facts):
    numpy = facts.get('numpy-effective')
    findings = F.numba_numpy_findings(facts['numba'], numpy)
    if findings and facts.get('numpy-base') and facts.get('numpy') and facts['numpy-base'] != facts['numpy']:
        f = findings[0]  # say which numpy: conda's numpy-base, not the numpy record the user pinned
        findings = [f._replace(reason=f.reason + ' [numpy %s is what imports: conda numpy-base, not the '
                                                  'numpy %s record]' % (numpy, facts['numpy']),
                               fix='conda install numpy=%s numpy-base=%s (conda#7481), then re-check'
                                   % (facts['numpy'], facts['numpy']))]
    error = facts.get('numba-import')
    if not findings and error and error != 'ok':
        return Finding('FAIL', 'import numba fails: %s' % error,
                       "pip install --force-reinstall 'numba==%s'" % facts['numba'])
    return findings


def numba_cuda(facts):
    if not uses_cuda(facts):
        return Finding('SKIP', 'no GPU: numba.cuda is not used (the rotated IoU runs on its CPU backends)')
    if not facts.get('cuda'):
        return Finding('SKIP', 'no CUDA toolkit found (see libnvvm)')
    return F.numba_toolkit_findings(facts['numba'], facts['cuda'])


def numba_driver(facts):
    return F.numba_driver_findings(facts['numba'], facts['driver'], facts.get('cuda'))


def libnvvm(facts):
    if not uses_cuda(facts):
        return Finding('SKIP', 'no GPU: libNVVM is not needed')
    if facts.get('libnvvm'):
        return None
    return Finding('WARN', "numba.cuda cannot find libNVVM (NvvmSupportError; mmdet3d's rotate_iou kernel "
                           "raises it at the first evaluation; kradar_plugin falls back to CPU)",
                   'conda install cudatoolkit (or pip install nvidia-cuda-nvcc-cu12) or set CUDA_HOME to a '
                   'toolkit with nvvm/lib64/libnvvm.so')


def compile_test(facts):
    result = facts.get('compile-test')
    if result is None:
        return Finding('SKIP', 'not run (use --compile-test)')
    status, detail = result
    if status == 'ok':
        return Finding('OK', 'numba.cuda test kernel: %s' % detail)
    if status == 'skip':
        return Finding('SKIP', detail)
    return Finding('FAIL' if has_gpu(facts) else 'WARN', 'compiling a tiny numba.cuda kernel failed: %s' % detail,
                   'apply the numba-cuda/numba-driver/libnvvm fixes above; then re-run '
                   'kradar-doctor --compile-test')
