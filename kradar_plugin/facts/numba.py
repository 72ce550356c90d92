"""numba's release series against Python, numpy, the CUDA toolkit (NVVM) and the NVIDIA driver.

Sources: numba's CHANGE_LOG and ``numba/__init__.py`` at each tag, numba issues #6041/#6607/#8715/#10188
(/work/shared/reference/rotate-iou.md and environment.md). Each ``*_findings`` function judges one pair and
names the doctor check it belongs to; ``numba_cpu_findings`` is what the numba gate (``ops/numba_gate.py``)
asks before anything compiles with numba, ``numba_cuda_findings`` what the CUDA backend asks before it uses a GPU.
"""
import collections

from .versions import major_minor, parse_version
from .cuda import CUDA_MIN_DRIVER, driver_max_cuda
from .result import CheckResult


# ---------------------------------------------------------------------------------------------------------
# numba release series. A row applies from ``first`` up to the next row's ``first``.
#   python            (min, max) supported CPython, both inclusive (wheels / python_requires)
#   numpy_min         numba refuses older numpy at import ("Numba needs NumPy X or greater")
#   numpy_cap         numba refuses newer numpy at import ("Numba needs NumPy X or less"); None = not
#                     enforced (before 0.54) or not recorded here (0.62+: capped by each release, the live
#                     import tells)
#   cuda_min          oldest CUDA toolkit numba.cuda accepts (older: NvvmSupportError)
#   cuda_below        first toolkit whose NVVM IR this numba cannot emit (None = no known ceiling):
#                     <=0.52 emit IR that NVVM of CUDA>=11.2 rejects ("parse expected comma after load's
#                     type", numba#6607); 0.53-0.56 emit IR 1.6 that CUDA 12's NVVM 2.0 rejects (numba#8715)
# ---------------------------------------------------------------------------------------------------------
NumbaSeries = collections.namedtuple('NumbaSeries', 'first python numpy_min numpy_cap cuda_min cuda_below')

# Where each row's CUDA columns (cuda_min, cuda_below) come from. "compiled": a real compile in the suite
# (tests/doctor/test_cuda_compile.py, test_blog_environment.py: NVIDIA's registry toolkits 11.8 and 12.9, the
# machine's 13.0); the rest is read from numba's CHANGE_LOG and issues: no test stack has that numba, and no
# registry toolkit is older than CUDA 11.7, so no cuda_min is reachable.
_READ = "read: numba's CHANGE_LOG and issues (no test stack has this numba)"
CUDA_EVIDENCE = {
    '0.48.0': 'compiled (numba 0.48.0): CUDA 11.8, 12.9 and 13.0 libNVVM refuse its IR (NvvmError "parse '
              'expected comma"); the <= 11.1 side: numba#6607',
    '0.51.0': _READ + '; numba#6607',
    '0.53.0': _READ + '; numba#6661, numba#8715',
    '0.54.0': _READ,
    '0.55.0': _READ,
    '0.56.0': _READ + ' (0.56.4, compiled, shares it)',
    '0.56.4': 'compiled (numba 0.56.4): CUDA 12.9 refuses IR 1.6 (numba#8715); CUDA 11.8 undecided without a '
              'driver (its runtime answers numba only with one); cuda_min: CHANGE_LOG',
    '0.57.0': _READ,
    '0.58.0': _READ,
    '0.58.1': _READ,
    '0.59.0': _READ,
    '0.60.0': 'compiled (numba 0.60.0, the 1.x stack): CUDA 12.9 and 13.0 to SASS, mmdet3d 1.0.0rc6 kernel '
              'too; cuda_min: CHANGE_LOG',
    '0.61.0': _READ,
    '0.61.2': _READ,
    '0.62.0': 'compiled (numba 0.68.1): CUDA 11.8 (PTX 7.8), 12.9 (8.8), 13.0 (9.0), each assembled by its own '
              'ptxas; cuda_min: CHANGE_LOG',
}

NUMBA_SERIES = (
    NumbaSeries('0.48.0', ('3.6', '3.8'), '1.15', None, '8.0', '11.2'),
    NumbaSeries('0.51.0', ('3.6', '3.8'), '1.15', None, '8.0', '11.2'),
    NumbaSeries('0.53.0', ('3.6', '3.9'), '1.15', None, '9.0', '12.0'),
    NumbaSeries('0.54.0', ('3.7', '3.9'), '1.17', '1.20', '9.2', '12.0'),
    NumbaSeries('0.55.0', ('3.7', '3.10'), '1.18', '1.21', '9.2', '12.0'),
    NumbaSeries('0.56.0', ('3.7', '3.10'), '1.18', '1.22', '10.2', '12.0'),
    NumbaSeries('0.56.4', ('3.7', '3.10'), '1.18', '1.23', '10.2', '12.0'),
    NumbaSeries('0.57.0', ('3.8', '3.11'), '1.21', '1.24', '11.0', None),
    NumbaSeries('0.58.0', ('3.8', '3.11'), '1.22', '1.25', '11.2', None),
    NumbaSeries('0.58.1', ('3.8', '3.12'), '1.22', '1.26', '11.2', None),
    NumbaSeries('0.59.0', ('3.9', '3.12'), '1.22', '1.26', '11.2', None),
    NumbaSeries('0.60.0', ('3.9', '3.12'), '1.22', '2.0', '11.2', None),
    NumbaSeries('0.61.0', ('3.10', '3.13'), '1.24', '2.1', '11.2', None),
    NumbaSeries('0.61.2', ('3.10', '3.13'), '1.24', '2.2', '11.2', None),
    NumbaSeries('0.62.0', ('3.10', '3.14'), '1.24', None, '11.2', None),
)

# Point facts about numba (each: the version boundary and why).
NUMBA_DTYPE_FIX = '0.51.0'      # numba PR #6078: wheels <=0.50 raise "expected dtype object, got
NUMPY_DTYPE_BREAK = '1.20'      # 'numpy.dtype[float64]'" on numpy>=1.20 (numba#6041)
NUMBA_NUMPY2 = '0.60.0'         # first numba built against numpy 2 (older: "Signature mismatch"/refusal)
NUMBA_DRIVER_580_FIX = '0.63.0'  # driver >= 580 segfaults the built-in CUDA target before 0.63 (numba#10188)
DRIVER_SEGFAULT = '580'
NUMBA_CUDA_DEPRECATED = '0.61.0'  # built-in numba.cuda deprecated in favour of the numba-cuda package
NUMBA_CTK_LISTED_MAX = '12.4'     # highest toolkit the built-in target's CTK_SUPPORTED lists (0.61..0.68)


def numba_series(numba):
    """The NUMBA_SERIES row that covers ``numba`` (None when unknown or older than the table)."""
    v = parse_version(numba)
    if v is None:
        return None
    row = None
    for series in NUMBA_SERIES:
        if v >= series.first or (v.stage[0] < 0 and v.release >= parse_version(series.first).release):
            row = series  # a pre-release (0.57.0rc1) behaves like its release
    return row


def numba_python_findings(numba, python):
    series, py = numba_series(numba), parse_version(python)
    if series is None or py is None:
        return []
    low, high = series.python
    py_mm = major_minor(py)
    if not low <= parse_version(py_mm) <= high:
        return [CheckResult('numba-python', 'FAIL',
                            'numba %s supports Python %s-%s, not %s (no wheel; pip refuses or the import '
                            'fails)' % (numba, low, high, python),
                            "use Python %s-%s for numba %s, or pick a numba release that supports Python %s"
                            % (low, high, major_minor(numba), py_mm))]
    return []


def numba_numpy_findings(numba, numpy):
    """At most one finding for the numba/numpy pair: the first that applies, most specific first."""
    series, np_v = numba_series(numba), parse_version(numpy)
    if series is None or np_v is None:
        return []
    nb = parse_version(numba)
    if nb < NUMBA_DTYPE_FIX and np_v >= NUMPY_DTYPE_BREAK:
        return [CheckResult('numba-numpy', 'FAIL',
                            "numba %s with numpy %s raises TypeError: expected dtype object, got "
                            "'numpy.dtype[float64]' (numba<=0.50 wheels vs numpy>=1.20, numba#6041)"
                            % (numba, numpy),
                            "pip install 'numpy<1.20' (mmdet3d<=0.18.1 pins numba==0.48.0 with numpy<1.20) "
                            "or pip install 'numba>=0.53'")]
    if np_v < series.numpy_min:
        return [CheckResult('numba-numpy', 'FAIL',
                            'numba %s refuses numpy %s at import (needs numpy>=%s)'
                            % (numba, numpy, series.numpy_min),
                            "pip install 'numpy>=%s'" % series.numpy_min)]
    if series.numpy_cap is not None and parse_version(major_minor(np_v)) > series.numpy_cap:
        return [CheckResult('numba-numpy', 'FAIL',
                            'numba %s refuses numpy %s at import ("Numba needs NumPy %s or less")'
                            % (numba, numpy, series.numpy_cap),
                            "pip install 'numpy<=%s.*' or a newer numba that supports numpy %s"
                            % (series.numpy_cap, major_minor(np_v)))]
    if np_v >= '2' and nb < NUMBA_NUMPY2:
        return [CheckResult('numba-numpy', 'FAIL',
                            'numba %s was built against numpy 1.x and cannot run on numpy %s'
                            % (numba, numpy),
                            "pip install 'numpy<2' or pip install 'numba>=%s'" % major_minor(NUMBA_NUMPY2))]
    return []


def numba_toolkit_findings(numba, cuda):
    """numba.cuda vs the CUDA toolkit (NVVM) it finds."""
    series, ctk = numba_series(numba), parse_version(cuda)
    if series is None or ctk is None:
        return []
    if series.cuda_below is not None and ctk >= series.cuda_below:
        if series.cuda_below == '11.2':
            return [CheckResult('numba-cuda', 'FAIL',
                                "numba %s cannot compile for CUDA %s (the libNVVM of CUDA >= 11.2 reads NVVM IR "
                                "1.6, numba <= 0.52 emits older IR: NvvmError \"parse expected comma after load's "
                                "type\", numba#6607)" % (numba, cuda),
                                "pip install 'numba>=0.53' (or use a CUDA<=11.1 toolkit for numba)")]
        return [CheckResult('numba-cuda', 'FAIL',
                            'numba %s cannot compile for CUDA %s (emits NVVM IR 1.6, CUDA 12 needs 2.0: '
                            'NvvmError, numba#8715)' % (numba, cuda),
                            "pip install 'numba>=0.57' (or use a CUDA 11.x toolkit for numba)")]
    if ctk < series.cuda_min:
        return [CheckResult('numba-cuda', 'FAIL',
                            'numba %s needs CUDA toolkit >= %s, found %s (NvvmSupportError: CUDA '
                            'Toolkit unsupported)' % (numba, series.cuda_min, cuda),
                            'install a CUDA toolkit >= %s for numba (conda install cudatoolkit=%s) or an older '
                            'numba' % (series.cuda_min, series.cuda_min))]
    if parse_version(numba) >= NUMBA_CUDA_DEPRECATED:
        return [CheckResult('numba-cuda', 'WARN', 'numba %s: the built-in numba.cuda target is deprecated (lists '
                            'toolkits up to %s); CUDA %s' % (numba, NUMBA_CTK_LISTED_MAX, cuda),
                            'pip install numba-cuda')]
    return []


def numba_driver_findings(numba, driver, cuda=None):
    """numba.cuda vs the NVIDIA driver (and the toolkit vs the driver when both are known)."""
    nb, drv, ctk = parse_version(numba), parse_version(driver), parse_version(cuda)
    findings = []
    if nb is not None and drv is not None and drv >= DRIVER_SEGFAULT and nb < NUMBA_DRIVER_580_FIX:
        findings.append(CheckResult('numba-driver', 'FAIL',
                                    'numba %s segfaults on NVIDIA driver %s (driver>=580 with the built-in '
                                    'CUDA target before numba 0.63, numba#10188)' % (numba, driver),
                                    "pip install 'numba>=0.63' (needs Python>=3.10) or use a driver < 580"))
    max_cuda = driver_max_cuda(driver)
    ctk_mm = major_minor(ctk)
    if ctk is not None and drv is not None and max_cuda is not None and parse_version(ctk_mm) > max_cuda:
        findings.append(CheckResult('numba-driver', 'FAIL',
                                    'CUDA toolkit %s is newer than driver %s supports (CUDA<=%s): ptxas '
                                    'Unsupported .version' % (cuda, driver, max_cuda),
                                    'upgrade the NVIDIA driver to >= %s or use a CUDA<=%s toolkit'
                                    % (dict(CUDA_MIN_DRIVER).get(ctk_mm, 'the one for CUDA %s' % ctk_mm), max_cuda)))
    return findings


def numba_cuda_findings(numba, numpy=None, cuda=None, driver=None, python=None):
    """CheckResults about numba's CUDA target for these versions (strings like '0.48.0', '11.3', '580.65';
    None = unknown). Any FAIL means the numba CUDA backend must not be used; reason and fix are one line
    each. The numba/numpy and numba/Python findings break numba as a whole (CPU too)."""
    if parse_version(numba) is None:
        return []
    return numba_cpu_findings(numba, numpy, python) + numba_toolkit_findings(numba, cuda) + \
        numba_driver_findings(numba, driver, cuda)


def numba_cpu_findings(numba, numpy=None, python=None):
    """CheckResults that break numba itself (the CPU @jit path too): Python and numpy pairs only."""
    if parse_version(numba) is None:
        return []
    return numba_python_findings(numba, python) + numba_numpy_findings(numba, numpy)
