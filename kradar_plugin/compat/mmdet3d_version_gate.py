"""Let mmdet3d 1.4 import beside the maintained forks (onedl-mmcv 2.3, onedl-mmdetection 3.5).

mmdet3d 1.4.0 (the last release, no fork) asserts ``mmcv < 2.2.0`` and ``mmdet < 3.4.0`` at import, but no
mmcv below 2.2 builds under setuptools >= 82 and mmdet 3.3.0 refuses mmcv 2.3 too. Users edit the two
``*_maximum_version`` strings in the installed ``mmdet3d/__init__.py``; this does the same, and only that:
each maximum is raised to just above the installed version (the next minor), and only when the installed
version is refused. Nothing imports mmdet3d (that would run the assert).

    python -m kradar_plugin.compat.mmdet3d_version_gate          # repairs, prints what it changed
    python -m kradar_plugin.compat.mmdet3d_version_gate --check  # exit 1 if a repair is needed
"""
import argparse
import importlib.util
import os
import re
import sys

from ..facts.versions import parse_version

# the assert bounds this repair may raise, and the distribution whose version it compares
BOUNDS = (('mmcv_maximum_version', 'mmcv'), ('mmdet_maximum_version', 'mmdet'))
MARK = '# raised by kradar_plugin.compat.mmdet3d_version_gate (was %s)'
FIRST_MMDET3D = '1.1.0'         # the first mmdet3d on mmengine / mmcv 2.x: the gate this repair knows


def init_path():
    """The installed ``mmdet3d/__init__.py`` (None when mmdet3d is not installed), found without importing."""
    spec = importlib.util.find_spec('mmdet3d')
    return spec.origin if spec is not None and spec.origin else None


def installed_version(module):
    """``module.__version__`` read from its ``version.py`` without importing the package (a literal, or the
    distribution a fork's ``version('onedl-...')`` names)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(spec.origin), 'version.py')
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    found = re.search(r"__version__\s*=\s*['\"]([^'\"]+)['\"]", text)
    if found:
        return found.group(1)
    # the onedl forks: __version__ = version('onedl-mmcv'), their distribution's metadata
    found = re.search(r"__version__\s*=\s*version\(\s*['\"]([^'\"]+)['\"]", text)
    return _distribution_version(found.group(1)) if found else None


def _distribution_version(dist):
    try:
        from importlib import metadata  # novermin  (mmdet3d 1.x needs Python >= 3.8)
        return metadata.version(dist)
    except Exception:  # ImportError on Python 3.7, PackageNotFoundError
        return None


def next_minor(version):
    """'2.3.6' -> '2.4.0': the smallest bound above every patch release of the installed minor."""
    major, minor = (list(parse_version(version).release) + [0, 0])[:2]
    return '%d.%d.0' % (major, minor + 1)


def planned_edits(text, versions):
    """[(name, old maximum, new maximum)] for each bound that refuses the installed version in ``text``."""
    edits = []
    for name, dist in BOUNDS:
        found = re.search(r"^%s = '([^']+)'" % name, text, re.M)
        have = parse_version(versions.get(dist) or '')
        if not found or have is None:
            continue
        exclusive = re.search(r'<\s*digit_version\(\s*%s' % name, text)    # '<', not '<=' (mmdet3d <= 1.0)
        if have > found.group(1) or (exclusive and have == found.group(1)):
            edits.append((name, found.group(1), next_minor(versions[dist])))
    return edits


def repair(path=None, versions=None):
    """Raise the refused maxima in mmdet3d's ``__init__.py``; returns the edits made ([] when none needed)."""
    path = path or init_path()
    if path is None:
        return []
    versions = versions or dict((dist, installed_version(dist)) for _, dist in BOUNDS)
    with open(path) as f:
        text = f.read()
    edits = planned_edits(text, versions)
    for name, old, new in edits:
        text = re.sub(r"^%s = '%s'.*$" % (name, re.escape(old)),
                      "%s = '%s'  %s" % (name, new, MARK % old), text, count=1, flags=re.M)
    if edits:
        with open(path, 'w') as f:
            f.write(text)
    return edits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--check', action='store_true', help='only say whether a repair is needed')
    args = parser.parse_args(argv)
    path = init_path()
    if path is None:
        print('mmdet3d is not installed')
        return 0
    mmdet3d = parse_version(installed_version('mmdet3d') or '')
    if mmdet3d is None or mmdet3d < FIRST_MMDET3D:
        print('mmdet3d %s: this repair is for mmdet3d >= %s (mmengine-based)' % (installed_version('mmdet3d'),
                                                                                 FIRST_MMDET3D))
        return 0
    if args.check:
        with open(path) as f:
            edits = planned_edits(f.read(), dict((d, installed_version(d)) for _, d in BOUNDS))
    else:
        edits = repair(path)
    for name, old, new in edits:
        print('%s: %s %s -> %s' % (path, name, old, new) + (' (needed)' if args.check else ''))
    if not edits:
        print('%s: no bound refuses the installed mmcv/mmdet' % path)
    return 1 if args.check and edits else 0


if __name__ == '__main__':
    sys.exit(main())
