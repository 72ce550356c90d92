"""OpenMMLab import-time version asserts (mmcv/mmdet/mmseg/mmengine ranges) and the 1.x / 2.x generations.

The live doctor reads the ranges from the installed packages' ``__init__.py``; the table here serves
``--assume`` (planned environments). Sources are named next to each table.
"""
from .mmcv_wheels import SETUPTOOLS_WITHOUT_PKG_RESOURCES
from .versions import parse_version
from .result import CheckResult


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


# mmdet3d 1.4.0 is the last release (PyPI, 2026-11-29; no fork): nothing newer accepts mmcv >= 2.2 or mmdet >=
# 3.4, so the documented repair raises its asserted maximum (kradar_plugin.compat.mmdet3d_version_gate).
MMDET3D_LAST_RELEASE = '1.4.0'
MMDET3D_GATE_REPAIR = 'python -m kradar_plugin.compat.mmdet3d_version_gate'


def range_findings(package, version, dependency, dep_version, minimum, maximum, source='asserts',
                   max_inclusive=True, setuptools=None):
    """FAIL when ``dep_version`` is outside [minimum, maximum] (or [minimum, maximum) when not
    ``max_inclusive``) that ``package`` ``version`` asserts. The fix installs the range (an mmcv range is a
    build from source: with setuptools >= 82 pinned below it first), and for the last mmdet3d release refusing
    a newer mmcv/mmdet it is the documented repair of its version gate."""
    dep = parse_version(dep_version)
    if dep is None or (minimum is None and maximum is None):
        return []
    above = maximum is not None and (dep > maximum if max_inclusive else dep >= maximum)
    if not ((minimum is not None and dep < minimum) or above):
        return []
    upper = ('<=%s' if max_inclusive else '<%s') % maximum if maximum is not None else ''
    wanted = ','.join(b for b in ('>=%s' % minimum if minimum is not None else '', upper) if b)
    install = "pip install '%s%s'" % (dependency, wanted)
    if dependency in ('mmcv', 'mmcv-full') and setuptools and parse_version(setuptools) is not None and \
            parse_version(setuptools) >= SETUPTOOLS_WITHOUT_PKG_RESOURCES:
        install = ("pip install 'setuptools<%s' && MMCV_WITH_OPS=1 pip install --no-build-isolation --no-binary "
                   "%s '%s%s' (its setup.py imports pkg_resources, gone in setuptools %s)"
                   % (SETUPTOOLS_WITHOUT_PKG_RESOURCES, dependency, dependency, wanted, setuptools))
    last = package == 'mmdet3d' and parse_version(version) is not None and \
        parse_version(version) >= MMDET3D_LAST_RELEASE
    if above and last and dependency in ('mmcv', 'mmdet'):
        fix = ('%s (mmdet3d %s is the last release: the documented repair raises the maximum it asserts to the '
               'installed %s %s); or %s' % (MMDET3D_GATE_REPAIR, version, dependency, dep_version, install))
    else:
        fix = '%s (or a %s release that accepts %s %s)' % (install, package, dependency, dep_version)
    return [CheckResult('mmcv-range', 'FAIL',
                        '%s %s %s %s%s but %s is installed (import-time AssertionError '
                        '"%s==%s is used but incompatible")'
                        % (package, version, source, dependency, wanted, dep_version,
                           dependency.upper().replace('-FULL', '').replace('MMENGINE', 'MMEngine'), dep_version),
                        fix)]


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
# The 2.x stack that installs today (torch >= 2.6, setuptools >= 82: mmcv 2.1's sdist needs pkg_resources, mmengine
# 0.10.7 cannot load a checkpoint): the pins of requirements/latest-*.txt (docs/development.md, .venv-latest)
OPENMMLAB_TODAY = ("pip uninstall -y mmcv-full mmcv mmengine mmdet && pip install 'onedl-mmengine==0.10.12' "
                   "'onedl-mmdetection==3.5.1' 'mmdet3d==1.4.0' && MMCV_WITH_OPS=1 pip install "
                   "--no-build-isolation 'onedl-mmcv==2.3.6' && " + MMDET3D_GATE_REPAIR)
TORCH_NEEDS_TODAYS_STACK = '2.6'


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
    first = dict(OPENMMLAB_SECOND_GENERATION).get(package)
    return None if first is None else (2 if v >= first else 1)


def generation_mix_findings(versions, torch=None):
    """FAIL when ``versions`` ({package: version or None}) mixes OpenMMLab 1.x and 2.x packages; the 2.x fix is
    today's stack from torch 2.6 on."""
    gens = {1: [], 2: []}
    for package in ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d'):
        gen = openmmlab_generation(package, versions.get(package))
        if gen is not None:
            gens[gen].append('%s %s' % (package, versions[package]))
    if not gens[1] or not gens[2]:
        return []
    new_torch = parse_version(torch) is not None and parse_version(torch) >= TORCH_NEEDS_TODAYS_STACK
    today = OPENMMLAB_TODAY if new_torch else OPENMMLAB_STACKS[2]
    return [CheckResult('openmmlab-mix', 'FAIL',
                        'OpenMMLab 1.x (%s) and 2.x (%s) packages in one environment: 2.x packages import '
                        'mmengine and assert mmcv>=2.0.0rc*, 1.x ones import mmcv.runner/mmcv.parallel '
                        '(gone in mmcv 2)' % (', '.join(gens[1]), ', '.join(gens[2])),
                        'pick one generation: 1.x: %s; or 2.x: %s' % (OPENMMLAB_STACKS[1], today))]
