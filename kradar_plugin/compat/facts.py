"""The one table of version facts shared by kradar-doctor and the rotated-IoU guard.

Every number here comes from /work/shared/reference/rotate-iou.md and environment.md (numba CHANGE_LOG and
``numba/__init__.py`` at each tag, numba issues #6041/#6607/#8715/#10188, mmdet/mmdet3d ``__init__.py``
asserts, mmcv PR #2944, mmengine PR #1365), or from NVIDIA's CUDA release notes (driver table). Data
first, then small functions that read it; a function returns ``Finding``s and never imports anything.
Numpy-only, Python 3.7 syntax: ``kradar_plugin.ops`` imports this module.
"""
import collections

from .versions import major_minor, parse_version

Finding = collections.namedtuple('Finding', 'status reason fix')  # status 'OK' | 'WARN' | 'FAIL'

STATUS_ORDER = {'OK': 0, 'SKIP': 0, 'WARN': 1, 'FAIL': 2}


def worst(findings, default='OK'):
    """The most severe status among ``findings`` ('FAIL' > 'WARN' > 'OK')."""
    statuses = [f.status for f in findings]
    return max(statuses, key=STATUS_ORDER.get) if statuses else default


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

# Oldest Linux driver for each CUDA toolkit (NVIDIA CUDA release notes, "CUDA Toolkit and Corresponding
# Driver Versions", GA releases). A toolkit newer than the driver produces PTX the driver cannot JIT:
# "ptxas ... Unsupported .version" / CUDA_ERROR_UNSUPPORTED_PTX_VERSION (OpenPCDet#675, numba#8961).
CUDA_MIN_DRIVER = (
    ('8.0', '375.26'), ('9.0', '384.81'), ('9.1', '390.46'), ('9.2', '396.26'), ('10.0', '410.48'),
    ('10.1', '418.39'), ('10.2', '440.33'), ('11.0', '450.36.06'), ('11.1', '455.23'),
    ('11.2', '460.27.03'), ('11.3', '465.19.01'), ('11.4', '470.42.01'), ('11.5', '495.29.05'),
    ('11.6', '510.39.01'), ('11.7', '515.43.04'), ('11.8', '520.61.05'), ('12.0', '525.60.13'),
    ('12.1', '530.30.02'), ('12.2', '535.54.03'), ('12.3', '545.23.06'), ('12.4', '550.54.14'),
    ('12.5', '555.42.02'), ('12.6', '560.28.03'), ('12.8', '570.26'), ('12.9', '575.51.03'),
    ('13.0', '580.65.06'),
)


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


def driver_max_cuda(driver):
    """Newest CUDA toolkit in CUDA_MIN_DRIVER that ``driver`` ('535.104.05') runs; None if unknown."""
    v = parse_version(driver)
    if v is None:
        return None
    best = None
    for cuda, min_driver in CUDA_MIN_DRIVER:
        if v >= min_driver:
            best = cuda
    return best


def _mm(version):
    return major_minor(version)


# Each rule: (facts it needs) -> Finding or None. Kept separate so each names one pair of versions.

def numba_python_findings(numba, python):
    series, py = numba_series(numba), parse_version(python)
    if series is None or py is None:
        return []
    low, high = series.python
    py_mm = _mm(py)
    if parse_version(py_mm) < low or parse_version(py_mm) > high:
        return [Finding('FAIL', 'numba %s supports Python %s-%s, not %s (no wheel; pip refuses or the import '
                                'fails)' % (numba, low, high, python),
                        "use Python %s-%s for numba %s, or pick a numba release that supports Python %s"
                        % (low, high, _mm(numba), py_mm))]
    return []


def numba_numpy_findings(numba, numpy):
    """At most one finding for the numba/numpy pair: the first that applies, most specific first."""
    series, np_v = numba_series(numba), parse_version(numpy)
    if series is None or np_v is None:
        return []
    nb = parse_version(numba)
    if nb < NUMBA_DTYPE_FIX and np_v >= NUMPY_DTYPE_BREAK:
        return [Finding('FAIL', "numba %s with numpy %s raises TypeError: expected dtype object, got "
                                "'numpy.dtype[float64]' (numba<=0.50 wheels vs numpy>=1.20, numba#6041)"
                        % (numba, numpy),
                        "pip install 'numpy<1.20' (mmdet3d<=0.18.1 pins numba==0.48.0 with numpy<1.20) "
                        "or pip install 'numba>=0.53'")]
    if np_v < series.numpy_min:
        return [Finding('FAIL', 'numba %s refuses numpy %s at import (needs numpy>=%s)'
                        % (numba, numpy, series.numpy_min),
                        "pip install 'numpy>=%s'" % series.numpy_min)]
    if series.numpy_cap is not None and parse_version(_mm(np_v)) > series.numpy_cap:
        return [Finding('FAIL', 'numba %s refuses numpy %s at import ("Numba needs NumPy %s or less")'
                        % (numba, numpy, series.numpy_cap),
                        "pip install 'numpy<=%s.*' or a newer numba that supports numpy %s"
                        % (series.numpy_cap, _mm(np_v)))]
    if np_v >= '2' and nb < NUMBA_NUMPY2:
        return [Finding('FAIL', 'numba %s was built against numpy 1.x and cannot run on numpy %s'
                        % (numba, numpy),
                        "pip install 'numpy<2' or pip install 'numba>=%s'" % _mm(NUMBA_NUMPY2))]
    return []


def numba_toolkit_findings(numba, cuda):
    """numba.cuda vs the CUDA toolkit (NVVM) it finds."""
    series, ctk = numba_series(numba), parse_version(cuda)
    if series is None or ctk is None:
        return []
    if series.cuda_below is not None and ctk >= series.cuda_below:
        if series.cuda_below == '11.2':
            return [Finding('FAIL', "numba %s cannot compile for CUDA %s (NVVM IR 1.6: NvvmError \"parse "
                                    "expected comma after load's type\", numba#6607)" % (numba, cuda),
                            "pip install 'numba>=0.53' (or use a CUDA<=11.1 toolkit for numba)")]
        return [Finding('FAIL', 'numba %s cannot compile for CUDA %s (emits NVVM IR 1.6, CUDA 12 needs 2.0: '
                                'NvvmError, numba#8715)' % (numba, cuda),
                        "pip install 'numba>=0.57' (or use a CUDA 11.x toolkit for numba)")]
    if ctk < series.cuda_min:
        return [Finding('FAIL', 'numba %s needs CUDA toolkit >= %s, found %s (NvvmSupportError: CUDA '
                                'Toolkit unsupported)' % (numba, series.cuda_min, cuda),
                        'install a CUDA toolkit >= %s for numba (conda install cudatoolkit=%s) or an older '
                        'numba' % (series.cuda_min, series.cuda_min))]
    findings = []
    nb = parse_version(numba)
    if nb >= NUMBA_CUDA_DEPRECATED:
        findings.append(Finding('WARN', 'numba %s: the built-in numba.cuda target is deprecated (lists toolkits '
                                        'up to %s); CUDA %s' % (numba, NUMBA_CTK_LISTED_MAX, cuda),
                                'pip install numba-cuda'))
    return findings


def numba_driver_findings(numba, driver, cuda=None):
    """numba.cuda vs the NVIDIA driver (and the toolkit vs the driver when both are known)."""
    nb, drv, ctk = parse_version(numba), parse_version(driver), parse_version(cuda)
    findings = []
    if nb is not None and drv is not None and drv >= DRIVER_SEGFAULT and nb < NUMBA_DRIVER_580_FIX:
        findings.append(Finding('FAIL', 'numba %s segfaults on NVIDIA driver %s (driver>=580 with the built-in '
                                        'CUDA target before numba 0.63, numba#10188)' % (numba, driver),
                                "pip install 'numba>=0.63' (needs Python>=3.10) or use a driver < 580"))
    max_cuda = driver_max_cuda(driver)
    if ctk is not None and drv is not None and max_cuda is not None and parse_version(_mm(ctk)) > max_cuda:
        findings.append(Finding('FAIL', 'CUDA toolkit %s is newer than driver %s supports (CUDA<=%s): ptxas '
                                        'Unsupported .version' % (cuda, driver, max_cuda),
                                'upgrade the NVIDIA driver to >= %s or use a CUDA<=%s toolkit'
                                % (dict(CUDA_MIN_DRIVER).get(_mm(ctk), 'the one for CUDA %s' % _mm(ctk)),
                                   max_cuda)))
    return findings


def numba_cuda_findings(numba, numpy=None, cuda=None, driver=None, python=None):
    """Findings about numba's CUDA target for these versions (strings like '0.48.0', '11.3', '580.65';
    None = unknown). Any FAIL means the numba CUDA backend must not be used; reason and fix are one line
    each. The numba/numpy and numba/Python findings break numba as a whole (CPU too)."""
    if parse_version(numba) is None:
        return []
    return (numba_python_findings(numba, python) + numba_numpy_findings(numba, numpy)
            + numba_toolkit_findings(numba, cuda) + numba_driver_findings(numba, driver, cuda))


def numba_cpu_findings(numba, numpy=None, python=None):
    """Findings that break numba itself (the CPU @jit path too): Python and numpy pairs only."""
    if parse_version(numba) is None:
        return []
    return numba_python_findings(numba, python) + numba_numpy_findings(numba, numpy)


# ---------------------------------------------------------------------------------------------------------
# OpenMMLab import-time asserts: the mmcv (and mmdet/mmseg) range each package accepts. Both ends inclusive
# because the packages' own asserts use ``>= min and <= max`` (mmdet 2.x, mmdet3d <=1.0.0rc6). The live
# doctor reads these numbers from the installed package's __init__.py; this table is for --assume.
# Sources: mmdet docs/en/get_started.md + mmdet/__init__.py; mmdet3d mmdet3d/__init__.py at the tags
# (environment.md: v0.17.3..v1.0.0rc0 accept mmcv 1.3.8..1.5.0) and docs/en/faq.md for later rcs.
# Columns: package, first version, last version (inclusive), {dependency: (min, max)}.
# ---------------------------------------------------------------------------------------------------------
OPENMMLAB_RANGES = (
    ('mmdet', '2.14.0', '2.16.99', {'mmcv-full': ('1.3.8', '1.4.0')}),
    ('mmdet', '2.17.0', '2.17.99', {'mmcv-full': ('1.3.14', '1.4.0')}),
    ('mmdet', '2.18.0', '2.18.99', {'mmcv-full': ('1.3.17', '1.4.0')}),
    ('mmdet', '2.19.0', '2.23.99', {'mmcv-full': ('1.3.17', '1.5.0')}),
    ('mmdet', '2.24.0', '2.24.99', {'mmcv-full': ('1.3.17', '1.6.0')}),
    ('mmdet', '2.25.0', '2.25.99', {'mmcv-full': ('1.3.17', '1.7.0')}),
    ('mmdet', '2.26.0', '2.28.99', {'mmcv-full': ('1.3.17', '1.8.0')}),
    ('mmdet3d', '0.15.0', '0.17.2', {'mmcv-full': ('1.3.8', '1.4.0'), 'mmdet': ('2.14.0', '3.0.0'),
                                     'mmseg': ('0.14.1', '1.0.0')}),
    ('mmdet3d', '0.17.3', '1.0.0rc0', {'mmcv-full': ('1.3.8', '1.5.0'), 'mmdet': ('2.14.0', '3.0.0'),
                                       'mmseg': ('0.14.1', '1.0.0')}),
    ('mmdet3d', '1.0.0rc1', '1.0.0rc1', {'mmcv-full': ('1.4.8', '1.5.0'), 'mmdet': ('2.19.0', '3.0.0'),
                                         'mmseg': ('0.20.0', '1.0.0')}),
    ('mmdet3d', '1.0.0rc2', '1.0.0rc3', {'mmcv-full': ('1.4.8', '1.6.0'), 'mmdet': ('2.24.0', '3.0.0'),
                                         'mmseg': ('0.20.0', '1.0.0')}),
    ('mmdet3d', '1.0.0rc4', '1.0.0rc6', {'mmcv-full': ('1.5.2', '1.7.0'), 'mmdet': ('2.24.0', '3.0.0'),
                                         'mmseg': ('0.20.0', '1.0.0')}),
)


def openmmlab_ranges(package, version):
    """{dependency: (min, max)} that ``package`` ``version`` asserts at import ({} when not in the table)."""
    v = parse_version(version)
    if v is None:
        return {}
    for name, first, last, ranges in OPENMMLAB_RANGES:
        if name == package and parse_version(first) <= v <= parse_version(last):
            return dict(ranges)
    return {}


def range_findings(package, version, dependency, dep_version, minimum, maximum, source='asserts'):
    """FAIL when ``dep_version`` is outside [minimum, maximum] that ``package`` ``version`` asserts."""
    dep = parse_version(dep_version)
    if dep is None or (minimum is None and maximum is None):
        return []
    if (minimum is not None and dep < minimum) or (maximum is not None and dep > maximum):
        return [Finding('FAIL', '%s %s %s %s>=%s,<=%s but %s is installed (import-time AssertionError '
                                '"%s==%s is used but incompatible")'
                        % (package, version, source, dependency, minimum, maximum, dep_version,
                           dependency.upper().replace('-FULL', ''), dep_version),
                        "pip install '%s>=%s,<=%s' (or a %s release that accepts %s %s)"
                        % (dependency, minimum, maximum, package, dependency, dep_version))]
    return []


# yapf 0.40.2 removed FormatCode(verify=...); mmcv Config.pretty_text (cfg.dump() in tools/train.py) passes
# it until mmcv 1.7.2 (PR #2944) / mmengine 0.8.5 (PR #1365): "FormatCode() got an unexpected keyword
# argument 'verify'" at launch (open-mmlab/mmdetection#10962).
YAPF_VERIFY_REMOVED = '0.40.2'
YAPF_FIXED_IN = (('mmcv-full', '1.7.2', '2.0.0'), ('mmcv', '1.7.2', '2.0.0'), ('mmengine', '0.8.5', None))


def yapf_findings(yapf, versions):
    """yapf vs the mmcv/mmengine that formats configs. ``versions``: {dist name: version or None}."""
    y = parse_version(yapf)
    if y is None or y < YAPF_VERIFY_REMOVED:
        return []
    findings = []
    for dist, fixed, below in YAPF_FIXED_IN:
        v = parse_version(versions.get(dist))
        if v is None or (below is not None and v >= below):
            continue  # mmcv 2.x formats configs through mmengine
        if v < fixed:
            findings.append(Finding('FAIL', "yapf %s with %s %s: Config.pretty_text/cfg.dump() raises "
                                            "\"FormatCode() got an unexpected keyword argument 'verify'\""
                                    % (yapf, dist, versions[dist]),
                                    "pip install 'yapf==0.40.1'"))
    return findings[:1]


# torch CUDA builds -> highest GPU compute capability with native kernels (torch.cuda.get_arch_list() of
# the official wheels); newer GPUs fail with "no kernel image is available for execution on the device".
TORCH_CUDA_MAX_CC = (('10.0', '7.5'), ('11.0', '8.0'), ('11.1', '8.6'), ('11.8', '9.0'), ('12.8', '12.0'))


def torch_cuda_max_cc(torch_cuda):
    """Highest compute capability the official torch wheels for CUDA ``torch_cuda`` compile for."""
    v = parse_version(torch_cuda)
    if v is None:
        return None
    best = None
    for cuda, cc in TORCH_CUDA_MAX_CC:
        if v >= cuda:
            best = cc
    return best


# torch.distributed.launch passes --local-rank=N from torch 2.0 on (--local_rank before); torchrun passes
# nothing (LOCAL_RANK env). mmdet3d's tools/train.py declares only --local_rank (environment.md).
TORCH_LOCAL_RANK_DASH = '2.0'
# torch.distributed default process-group timeout (torch/distributed/constants.py).
DEFAULT_PG_TIMEOUT_S = 1800

# /dev/shm sizing (heuristic, not a documented number): each DataLoader worker keeps prefetch_factor=2
# batches in shared memory; a few K-Radar radar tensors per batch make ~128 MiB the floor per worker and
# 512 MiB comfortable. Docker's default /dev/shm is 64 MiB (PyTorch README: use --ipc=host or --shm-size).
SHM_PER_WORKER_MIN = 128 * 2 ** 20
SHM_PER_WORKER_OK = 512 * 2 ** 20
SHM_NO_CONFIG_MIN = 1 * 2 ** 30
# file_descriptor sharing needs one fd per shared tensor in flight; below this soft limit workers hit
# "received 0 items of ancdata" / "Too many open files".
NOFILE_MIN = 4096
