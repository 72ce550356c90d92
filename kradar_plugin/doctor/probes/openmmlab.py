"""OpenMMLab packages read as files: where a package is installed, whether mmcv's compiled ops are on disk,
and the version ranges each package's ``__init__.py`` asserts (never imported)."""
import glob
import os
import re

from .files import read_text


def package_dir(module):
    """Directory of an installed top-level package WITHOUT importing it (None if not installed)."""
    try:
        import importlib.util
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return list(spec.submodule_search_locations)[0] if spec is not None and spec.submodule_search_locations \
        else None


def probe_mmcv_ext_file():
    """Whether mmcv's compiled extension (mmcv._ext) is on disk: True/False, None without mmcv."""
    d = package_dir('mmcv')
    if d is None:
        return None
    return bool(glob.glob(os.path.join(d, '_ext*.so')) + glob.glob(os.path.join(d, '_ext*.pyd')))


_RANGE_RE = re.compile(r"""^\s*(mmcv|mmdet|mmseg|mmengine)_(minimum|maximum)_version\s*=\s*['"]([^'"]+)['"]""",
                       re.M)
_UPPER_RE = re.compile(r"""^\s*(MMCV|MMENGINE|MMDET)_(MIN|MAX)\s*=\s*['"]([^'"]+)['"]""", re.M)


def parse_version_asserts(source):
    """{dependency: (min, max, max_inclusive, enforced)} from an OpenMMLab package's __init__.py text.

    Two spellings: ``mmcv_minimum_version = '1.3.8'`` ... ``mmcv_version <= digit_version(mmcv_maximum_version)``
    (mmdet, mmdet3d) and ``MMCV_MIN = '1.3.13'`` ... ``mmcv_version < mmcv_max_version`` (mmseg). The maximum is
    exclusive when the source compares with ``<`` (not ``<=``). enforced is False for 'relaxed' checks that only
    warn (mmdet3d forks). The dependency 'mmcv' is reported as 'mmcv-full': the mmcv the assert sees."""
    ranges = {}
    for dep, which, value in _RANGE_RE.findall(source):
        ranges.setdefault(dep, {})[which] = value
    for dep, which, value in _UPPER_RE.findall(source):
        ranges.setdefault(dep.lower(), {})['minimum' if which == 'MIN' else 'maximum'] = value
    result = {}
    for dep, bounds in ranges.items():
        exclusive = re.search(r'<\s*digit_version\(\s*%s_maximum_version' % dep, source) or \
            re.search(r'<\s*%s_max_version' % dep, source, re.I) or re.search(r'<\s*%s_MAX\b' % dep.upper(), source)
        enforced = bool(re.search(r'assert|raise', source))
        result['mmcv-full' if dep == 'mmcv' else dep] = (bounds.get('minimum'), bounds.get('maximum'),
                                                         not exclusive, enforced)
    return result


def probe_installed_ranges(packages=('mmdet', 'mmdet3d', 'mmseg')):
    """{package: parse_version_asserts(its __init__.py)} for installed packages, read as text."""
    found = {}
    for package in packages:
        d = package_dir(package)
        source = read_text(os.path.join(d, '__init__.py')) if d else None
        if source:
            found[package] = parse_version_asserts(source)
    return found
