"""The one table of version facts shared by kradar-doctor and the rotated-IoU guard.

Every number here comes from /work/shared/reference/rotate-iou.md and environment.md (numba CHANGE_LOG and
``numba/__init__.py`` at each tag, numba issues #6041/#6607/#8715/#10188, mmdet/mmdet3d ``__init__.py``
asserts, mmcv PR #2944, mmengine PR #1365), from NVIDIA's CUDA release notes (driver table), or from the
public sources named next to each OpenMMLab fact below (git tags of open-mmlab/mmdetection3d, mmengine and
mmcv; the published mmdet/mmsegmentation/mmengine wheels; numpy's own ``__init__.py`` at each release).
Data first, then small functions that read it; a function returns ``Finding``s and never imports anything.
Numpy-only, Python 3.7 syntax: ``kradar_plugin.ops`` imports this module.
"""
import collections

from .versions import (BOX_CONVENTION_CHANGED_IN, major_minor, mmdet3d_box_convention, parse_version)

Finding = collections.namedtuple('Finding', 'status reason fix')  # status 'OK' | 'WARN' | 'FAIL'


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
# OpenMMLab import-time asserts: the mmcv (and mmdet/mmseg/mmengine) range each package accepts. The live
# doctor reads these numbers from the installed package's __init__.py; this table is for --assume.
# Columns: package, first version, last version (inclusive), {dependency: (min, max)}, max inclusive?
#   1.x generation (mmcv-full): ``min <= v <= max`` (mmdet 2.x, mmdet3d <= 1.0.0rc6); 2.x generation: ``min <=
#   v < max``. Key 'mmcv-full' / 'mmcv' is the mmcv the assert sees (mmcv.__version__: mmcv-full 1.x, mmcv 2.x
#   or the mmcv-lite build).
# Sources: mmdet 2.x docs/en/get_started.md + mmdet/__init__.py; mmdet3d ``mmdet3d/__init__.py`` at every tag
# v0.15.0..v1.4.0 (open-mmlab/mmdetection3d; the docs' faq.md table differs from the code: v0.18.0..v1.0.0rc2
# assert mmdet>=2.19.0, v1.0.0rc3..rc6 mmdet>=2.24.0); mmdet 3.0.0/3.1.0/3.2.0/3.3.0 ``mmdet/__init__.py`` in
# the PyPI wheels.
# ---------------------------------------------------------------------------------------------------------
OPENMMLAB_RANGES = (
    # 2.14.0, 2.17.0, 2.18.0, 2.19.0, 2.19.1, 2.20.0, 2.23.0 read in their PyPI wheels (2026-11-24)
    ('mmdet', '2.14.0', '2.18.99', {'mmcv-full': ('1.3.8', '1.4.0')}, True),
    ('mmdet', '2.19.0', '2.19.99', {'mmcv-full': ('1.3.8', '1.5.0')}, True),
    ('mmdet', '2.20.0', '2.23.99', {'mmcv-full': ('1.3.17', '1.5.0')}, True),
    ('mmdet', '2.24.0', '2.24.99', {'mmcv-full': ('1.3.17', '1.6.0')}, True),
    ('mmdet', '2.25.0', '2.25.99', {'mmcv-full': ('1.3.17', '1.7.0')}, True),
    ('mmdet', '2.26.0', '2.28.99', {'mmcv-full': ('1.3.17', '1.8.0')}, True),
    ('mmdet', '3.0.0', '3.1.99', {'mmcv': ('2.0.0rc4', '2.1.0'), 'mmengine': ('0.7.1', '1.0.0')}, False),
    ('mmdet', '3.2.0', '3.3.99', {'mmcv': ('2.0.0rc4', '2.2.0'), 'mmengine': ('0.7.1', '1.0.0')}, False),
    ('mmdet3d', '0.15.0', '0.17.2', {'mmcv-full': ('1.3.8', '1.4.0'), 'mmdet': ('2.14.0', '3.0.0'),
                                     'mmseg': ('0.14.1', '1.0.0')}, True),
    ('mmdet3d', '0.17.3', '0.17.3', {'mmcv-full': ('1.3.8', '1.5.0'), 'mmdet': ('2.14.0', '3.0.0'),
                                     'mmseg': ('0.14.1', '1.0.0')}, True),
    ('mmdet3d', '0.18.0', '1.0.0rc0', {'mmcv-full': ('1.3.8', '1.5.0'), 'mmdet': ('2.19.0', '3.0.0'),
                                       'mmseg': ('0.20.0', '1.0.0')}, True),
    ('mmdet3d', '1.0.0rc1', '1.0.0rc1', {'mmcv-full': ('1.4.8', '1.5.0'), 'mmdet': ('2.19.0', '3.0.0'),
                                         'mmseg': ('0.20.0', '1.0.0')}, True),
    ('mmdet3d', '1.0.0rc2', '1.0.0rc2', {'mmcv-full': ('1.4.8', '1.6.0'), 'mmdet': ('2.19.0', '3.0.0'),
                                         'mmseg': ('0.20.0', '1.0.0')}, True),
    ('mmdet3d', '1.0.0rc3', '1.0.0rc3', {'mmcv-full': ('1.4.8', '1.6.0'), 'mmdet': ('2.24.0', '3.0.0'),
                                         'mmseg': ('0.20.0', '1.0.0')}, True),
    # 1.0.0rc4..rc6 refuse mmcv-full 1.7.1/1.7.2 (environment.md section 7: "MMCV==1.7.2 is used but
    # incompatible. Please install mmcv>=1.5.2, <=1.7.0.", run).
    ('mmdet3d', '1.0.0rc4', '1.0.0rc6', {'mmcv-full': ('1.5.2', '1.7.0'), 'mmdet': ('2.24.0', '3.0.0'),
                                         'mmseg': ('0.20.0', '1.0.0')}, True),
    ('mmdet3d', '1.1.0rc0', '1.1.0rc1', {'mmcv': ('2.0.0rc0', '2.1.0'), 'mmdet': ('3.0.0rc0', '3.1.0')}, False),
    ('mmdet3d', '1.1.0rc2', '1.1.0rc3', {'mmcv': ('2.0.0rc0', '2.1.0'), 'mmdet': ('3.0.0rc0', '3.1.0'),
                                         'mmengine': ('0.1.0', '1.0.0')}, False),
    ('mmdet3d', '1.1.0', '1.1.99', {'mmcv': ('2.0.0rc4', '2.1.0'), 'mmdet': ('3.0.0', '3.1.0'),
                                    'mmengine': ('0.7.1', '1.0.0')}, False),
    ('mmdet3d', '1.2.0', '1.2.99', {'mmcv': ('2.0.0rc4', '2.1.0'), 'mmdet': ('3.0.0', '3.2.0'),
                                    'mmengine': ('0.8.0', '1.0.0')}, False),
    ('mmdet3d', '1.3.0', '1.3.99', {'mmcv': ('2.0.0rc4', '2.2.0'), 'mmdet': ('3.0.0rc5', '3.3.0'),
                                    'mmengine': ('0.8.0', '1.0.0')}, False),
    ('mmdet3d', '1.4.0', '1.4.99', {'mmcv': ('2.0.0rc4', '2.2.0'), 'mmdet': ('3.0.0rc5', '3.4.0'),
                                    'mmengine': ('0.8.0', '1.0.0')}, False),
)


def openmmlab_asserts(package, version):
    """{dependency: (min, max, max_inclusive)} that ``package`` ``version`` asserts at import ({} when not in
    the table)."""
    v = parse_version(version)
    if v is None:
        return {}
    for name, first, last, ranges, inclusive in OPENMMLAB_RANGES:
        if name == package and parse_version(first) <= v <= parse_version(last):
            return dict((dep, (lo, hi, inclusive)) for dep, (lo, hi) in ranges.items())
    return {}


def openmmlab_ranges(package, version):
    """{dependency: (min, max)} that ``package`` ``version`` asserts at import ({} when not in the table)."""
    return dict((dep, (lo, hi)) for dep, (lo, hi, _) in openmmlab_asserts(package, version).items())


def range_findings(package, version, dependency, dep_version, minimum, maximum, source='asserts',
                   max_inclusive=True):
    """FAIL when ``dep_version`` is outside [minimum, maximum] (or [minimum, maximum) when not
    ``max_inclusive``) that ``package`` ``version`` asserts."""
    dep = parse_version(dep_version)
    if dep is None or (minimum is None and maximum is None):
        return []
    above = maximum is not None and (dep > maximum if max_inclusive else dep >= maximum)
    if (minimum is not None and dep < minimum) or above:
        upper = ('<=%s' if max_inclusive else '<%s') % maximum if maximum is not None else ''
        wanted = ','.join(b for b in ('>=%s' % minimum if minimum is not None else '', upper) if b)
        return [Finding('FAIL', '%s %s %s %s%s but %s is installed (import-time AssertionError '
                                '"%s==%s is used but incompatible")'
                        % (package, version, source, dependency, wanted, dep_version,
                           dependency.upper().replace('-FULL', '').replace('MMENGINE', 'MMEngine'),
                           dep_version),
                        "pip install '%s%s' (or a %s release that accepts %s %s)"
                        % (dependency, wanted, package, dependency, dep_version))]
    return []


# ---------------------------------------------------------------------------------------------------------
# OpenMMLab generations. 1.x: mmcv-full / lite mmcv 1.x, mmdet 2.x, mmseg 0.x, mmdet3d <= 1.0.0rc6 (mmcv.runner);
# 2.x: mmengine-based mmcv 2.x / mmcv-lite, mmdet 3.x, mmseg 1.x, mmdet3d >= 1.1.0rc0. The first 2.x release of
# each asserts mmcv>=2.0.0rc*: mmdet3d v1.1.0rc0 ``__init__.py`` (mmcv>=2.0.0rc0, mmdet>=3.0.0rc0), mmseg
# 1.0.0rc0 wheel (mmcv>=2.0.0rc1, imports mmengine). mmcv-full has no 2.x release and mmcv-lite no 1.x one.
# mmengine itself installs no ``mmcv`` package and coexists with a 1.x stack: it is not a generation marker.
# ---------------------------------------------------------------------------------------------------------
OPENMMLAB_SECOND_GENERATION = (('mmcv', '2.0.0rc0'), ('mmdet', '3.0.0rc0'), ('mmseg', '1.0.0rc0'),
                               ('mmdet3d', '1.1.0rc0'))
OPENMMLAB_STACKS = {
    1: "pip install 'mmcv-full==1.7.0' 'mmdet==2.28.2' 'mmsegmentation==0.30.0' 'mmdet3d==1.0.0rc6'",
    2: "pip uninstall -y mmcv-full && pip install 'mmengine==0.10.7' 'mmcv==2.1.0' 'mmdet==3.3.0' "
       "'mmdet3d==1.4.0'",
}


def openmmlab_generation(package, version):
    """1 or 2 (OpenMMLab 1.x / 2.x) for an installed ``package`` ``version``; None for packages that are no
    marker (mmengine) or an unknown version."""
    v = parse_version(version)
    if v is None:
        return None
    if package == 'mmcv-full':
        return 1
    if package == 'mmcv-lite':
        return 2
    for name, first in OPENMMLAB_SECOND_GENERATION:
        if name == package:
            return 2 if v >= first else 1
    return None


def generation_mix_findings(versions):
    """FAIL when ``versions`` ({package: version or None}) mixes OpenMMLab 1.x and 2.x packages."""
    gens = {1: [], 2: []}
    for package in ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d'):
        gen = openmmlab_generation(package, versions.get(package))
        if gen is not None:
            gens[gen].append('%s %s' % (package, versions[package]))
    if not gens[1] or not gens[2]:
        return []
    return [Finding('FAIL', 'OpenMMLab 1.x (%s) and 2.x (%s) packages in one environment: 2.x packages import '
                            'mmengine and assert mmcv>=2.0.0rc*, 1.x ones import mmcv.runner/mmcv.parallel '
                            '(gone in mmcv 2)' % (', '.join(gens[1]), ', '.join(gens[2])),
                    'pick one generation: 1.x: %s; or 2.x: %s' % (OPENMMLAB_STACKS[1], OPENMMLAB_STACKS[2]))]


# ---------------------------------------------------------------------------------------------------------
# numpy 1.24 expired the aliases deprecated in 1.20: np.bool/np.int/np.float/np.complex/np.object/np.str raise
# AttributeError ("module 'numpy' has no attribute 'bool'"), and np.long is gone too (numpy 1.24.4
# ``numpy/__init__.py``: ``__former_attrs__`` + ``del long``). numpy 2.0 defines np.bool and np.long again
# (as numpy scalar types); np.int/np.float/np.object/np.str stay removed (numpy 2.0.0 ``__init__.py``).
# mmdet3d (git tags of open-mmlab/mmdetection3d):
#   v0.5.0 .. v1.1.0rc3 (every 0.x, 1.0.0rc0..rc6, 1.1.0rc0..rc3) use np.bool in ObjectRangeFilter
#     (``transforms_3d.py``, in most LiDAR train pipelines), dtype=np.long in DataBaseSampler.sample_all
#     (ObjectSample), np.int in PointSegClassMapping/seg_eval/scannet, np.float in scannet eval.
#   v1.1.0 (PR #2339, "Deprecating old type alias due to new version of numpy") replaced them except
#     ``dtype=np.long`` in ``datasets/transforms/dbsampler.py`` (ObjectSample), still there in v1.4.0, the
#     latest release; fixed on dev-1.x by PR #2872 (2024-01-17), in no release.
# ---------------------------------------------------------------------------------------------------------
NUMPY_ALIASES_REMOVED = '1.24'
NUMPY_BOOL_LONG_BACK = '2.0'
MMDET3D_ALIASES_FIXED = '1.1.0'
MMDET3D_NP_LONG_LAST = '1.4.0'


def numpy_alias_findings(mmdet3d, numpy, pipeline_types=None):
    """mmdet3d vs the numpy aliases it uses. ``pipeline_types``: the transform types of the config to run
    (a set), None when no config is known."""
    mm, np_v = parse_version(mmdet3d), parse_version(numpy)
    if mm is None or np_v is None or np_v < NUMPY_ALIASES_REMOVED:
        return []
    fix = "pip install 'numpy==1.23.5' (or 'numpy<1.24')"
    if mm < MMDET3D_ALIASES_FIXED:
        if np_v < NUMPY_BOOL_LONG_BACK:
            return [Finding('FAIL', 'mmdet3d %s uses np.bool (ObjectRangeFilter, in most train pipelines), np.int '
                                    'and np.long, removed in numpy 1.24 (numpy %s): AttributeError at the first '
                                    'training batch' % (mmdet3d, numpy), fix)]
        return [Finding('FAIL', 'mmdet3d %s uses np.int (PointSegClassMapping, segmentation evaluation) and '
                                'np.float, which numpy %s does not define (removed in 1.24; only np.bool/np.long '
                                'came back in 2.0), and its mmcv-full/torch builds predate numpy 2'
                        % (mmdet3d, numpy), fix)]
    if mm <= MMDET3D_NP_LONG_LAST and np_v < NUMPY_BOOL_LONG_BACK:
        reason = ("mmdet3d %s's ObjectSample (DataBaseSampler.sample_all) uses dtype=np.long, removed in numpy "
                  "1.24 (numpy %s): AttributeError when a GT-sampling pipeline draws its first sample"
                  % (mmdet3d, numpy))
        fix_long = "pip install 'numpy<1.24' or 'numpy>=2' where the stack allows (np.long is back in numpy 2)"
        if pipeline_types is None:
            return [Finding('WARN', reason + ' (give --config to check the pipeline)', fix_long)]
        if 'ObjectSample' in pipeline_types:
            return [Finding('FAIL', reason + ' (the config uses ObjectSample)', fix_long)]
    return []


# ---------------------------------------------------------------------------------------------------------
# Prebuilt mmcv 2.x wheels: the newest torch (major.minor) OpenMMLab's index (download.openmmlab.com/mmcv/
# dist/<cuXXX>/<torchX.Y>/index.html) has Linux wheels for, per mmcv release (open-mmlab/mmcv
# docs/en/_static/version.json on main, last updated by PR #3166, 2024-08-17). PyPI has only sdists of mmcv
# 2.x (environment.md section 7): with a newer torch, pip compiles mmcv from source (a compiler, and for GPU ops
# a CUDA toolkit matching torch's) or picks a wheel for another torch ("undefined symbol" in mmcv._ext).
# ---------------------------------------------------------------------------------------------------------
MMCV_WHEEL_TORCH_MAX = (('2.0.0rc1', '1.12'), ('2.0.0rc2', '1.12'), ('2.0.0rc3', '1.13'), ('2.0.0rc4', '1.13'),
                        ('2.0.0', '2.0'), ('2.0.1', '2.0'), ('2.1.0', '2.1'), ('2.2.0', '2.4'))


def mmcv_wheel_findings(mmcv, torch):
    """WARN when OpenMMLab publishes no prebuilt ``mmcv`` 2.x wheel for ``torch``'s major.minor."""
    v, t = parse_version(mmcv), parse_version(torch)
    if v is None or t is None or v < '2.0.0rc0':
        return []
    newest = dict((parse_version(m), tmax) for m, tmax in MMCV_WHEEL_TORCH_MAX).get(v)
    if newest is None or parse_version(major_minor(t)) <= newest:
        return []
    return [Finding('WARN', 'OpenMMLab publishes mmcv %s wheels for torch <= %s only, not for torch %s: pip '
                            'compiles mmcv from source (a compiler, and for GPU ops a CUDA toolkit matching '
                            "torch's), or a wheel for another torch fails with \"undefined symbol\" in mmcv._ext"
                    % (mmcv, newest, torch),
                    "pip install 'torch==%s.*' and mmcv==%s -f https://download.openmmlab.com/mmcv/dist/<cuXXX>/"
                    "torch%s/index.html, or build it for this torch: MMCV_WITH_OPS=1 pip install mmcv==%s "
                    "--no-binary mmcv" % (newest, mmcv, newest, mmcv))]


# ---------------------------------------------------------------------------------------------------------
# torch 2.6 flipped torch.load's default to weights_only=True (pytorch docs; TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
# restores weights_only=False where the caller passes none, torch >= 2.6 docs "Miscellaneous Environment
# Variables"). mmengine 0.10.7 (the latest release, 2025-03-04) calls torch.load(filename, map_location=...)
# in runner/checkpoint.py without weights_only, and an mmengine checkpoint pickles mmengine objects (the
# message hub's HistoryBuffer): load_from/resume raise "Weights only load failed". Fixed on main by PR #1670
# (commit 151a87ab, 2025-10-26), whose version string is 0.11.0rc0 (main since 2025-09-15).
# ---------------------------------------------------------------------------------------------------------
TORCH_WEIGHTS_ONLY_DEFAULT = '2.6'
MMENGINE_WEIGHTS_ONLY_FIXED = '0.11.0rc0'


def mmengine_torch_load_findings(mmengine, torch):
    m, t = parse_version(mmengine), parse_version(torch)
    if m is None or t is None or m >= MMENGINE_WEIGHTS_ONLY_FIXED or t < TORCH_WEIGHTS_ONLY_DEFAULT:
        return []
    return [Finding('FAIL', "mmengine %s calls torch.load() without weights_only; torch %s defaults to "
                            "weights_only=True: load_from/resume of an mmengine checkpoint raise "
                            "UnpicklingError \"Weights only load failed\"" % (mmengine, torch),
                    "pip install 'torch<2.6' (or export TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1, or mmengine from main "
                    ">= 151a87ab, PR #1670)")]


# ---------------------------------------------------------------------------------------------------------
# Box conventions (kradar_plugin.compat.versions.mmdet3d_box_convention): mmdet3d 1.0.0rc0 changed LiDAR box
# sizes (w, l, h) -> (l, w, h) and the yaw mapping to camera (-yaw - pi/2). mmdet3d's tools/train.py writes
# ``mmdet3d_version`` into checkpoint_config.meta (v0.17.3, v1.0.0rc6), so checkpoint['meta'] carries it; an
# mmengine runner (mmdet3d >= 1.1.0rc0, whose tools/train.py builds mmengine's Runner) writes
# ``mmengine_version`` instead (mmengine 0.10.7 Runner.save_checkpoint) and no mmdet3d version.
# ---------------------------------------------------------------------------------------------------------
MMDET3D_FIRST_MMENGINE = '1.1.0rc0'


def box_convention_findings(checkpoint_mmdet3d, installed_mmdet3d, inferred_from=None):
    """WARN when a checkpoint trained under one mmdet3d box convention is evaluated under the other.

    ``inferred_from``: a text saying how the checkpoint's version was inferred (None: read from its meta)."""
    ckpt, here = mmdet3d_box_convention(checkpoint_mmdet3d), mmdet3d_box_convention(installed_mmdet3d)
    if ckpt is None or here is None or ckpt == here:
        return []
    trained = 'mmdet3d %s' % checkpoint_mmdet3d if inferred_from is None else inferred_from
    return [Finding('WARN', "checkpoint trained with %s ('%s' boxes) but mmdet3d %s is installed ('%s'; the "
                            "convention changed in %s: LiDAR sizes (w,l,h)->(l,w,h), yaw -> camera -yaw-pi/2): "
                            "read under the installed convention, its boxes get swapped sizes and a wrong yaw"
                    % (trained, ckpt, installed_mmdet3d, here, BOX_CONVENTION_CHANGED_IN),
                    "evaluate with box_convention='%s' (dataset.evaluate keyword: evaluation=dict(..., "
                    "box_convention='%s') in the config, i.e. --cfg-options \"evaluation.box_convention=%s\"), or "
                    "install an mmdet3d of the checkpoint's convention" % (ckpt, ckpt, ckpt))]


# yapf 0.40.2 removed FormatCode(verify=...); mmcv Config.pretty_text (cfg.dump() in tools/train.py) passes
# it until mmcv 1.7.2 (PR #2944) / mmengine 0.8.5 (PR #1365): "FormatCode() got an unexpected keyword
# argument 'verify'" at launch (open-mmlab/mmdetection#10962). mmengine <= 0.8.4 catches that TypeError and
# raises "SyntaxError: Failed to format the config file" instead (mmengine 0.8.4/0.8.5 wheels,
# mmengine/config/config.py).
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
            if dist == 'mmengine':
                findings.append(Finding('FAIL', 'yapf %s with mmengine %s: Config.pretty_text/cfg.dump() raises '
                                                '"SyntaxError: Failed to format the config file" (FormatCode() no '
                                                "longer takes verify=)" % (yapf, versions[dist]),
                                        "pip install 'mmengine>=0.8.5' (or 'yapf==0.40.1')"))
            else:
                findings.append(Finding('FAIL', "yapf %s with %s %s: Config.pretty_text/cfg.dump() raises "
                                                "\"FormatCode() got an unexpected keyword argument 'verify'\" "
                                                "(in a script that has not imported kradar_plugin, which drops "
                                                "the argument with a warning)"
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
