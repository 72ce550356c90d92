"""Installed package versions from distribution metadata and conda-meta records (nothing is imported)."""
import glob
import io
import json
import os
import sys

from ...facts.openmmlab import openmmlab_generation
from ...facts.versions import normalize_name

DISTRIBUTIONS = ('numba', 'numpy', 'torch', 'mmcv', 'mmcv-full', 'mmcv-lite', 'mmdet', 'mmdet3d', 'mmseg',
                 'mmengine', 'yapf', 'numba-cuda', 'setuptools', 'trimesh')
# Fact name -> distribution names to try, where they differ (mmseg is distributed as mmsegmentation).
DISTRIBUTION_NAMES = {'mmseg': ('mmsegmentation', 'mmseg')}


#: OpenMMLab import package -> (its fact, the distributions OpenMMLab publishes it as). Any other
#: distribution that installs the package is a fork judged as the package it replaces: onedl-mmcv (2.3.0 on,
#: after mmcv 2.2.0), onedl-mmengine (0.10.8 on, after 0.10.7), onedl-mmdetection (3.4.0 on, after 3.3.0),
#: onedl-mmsegmentation, build variants such as onedl-mmcv-cu128-torch2-8 (PyPI, 2026-11-27; there is no
#: onedl-mmdetection3d there).
OPENMMLAB_PACKAGES = (('mmcv', 'mmcv', ('mmcv', 'mmcv-full', 'mmcv-lite')), ('mmengine', 'mmengine', ('mmengine',)),
                      ('mmdet', 'mmdet', ('mmdet',)), ('mmdet3d', 'mmdet3d', ('mmdet3d',)),
                      ('mmseg', 'mmseg', ('mmsegmentation', 'mmseg')))


def _metadata():
    try:
        from importlib import metadata  # novermin  (Python >= 3.8; 3.7 falls back below)
    except ImportError:  # Python 3.7
        try:
            import importlib_metadata as metadata
        except ImportError:
            metadata = None
    return metadata


def metadata_version(name):
    metadata = _metadata()
    spellings = (name, name.replace('-', '_'))
    if metadata is not None:
        for spelling in spellings:
            try:
                return metadata.version(spelling)
            except Exception:  # PackageNotFoundError and broken metadata alike
                continue
        return None
    try:
        import pkg_resources
    except ImportError:
        return None
    for spelling in spellings:
        try:
            return pkg_resources.get_distribution(spelling).version
        except Exception:
            continue
    return None


def probe_distributions(names=DISTRIBUTIONS):
    """{name: installed version or None} from package metadata (nothing is imported)."""
    found = {}
    for name in names:
        versions = (metadata_version(dist) for dist in DISTRIBUTION_NAMES.get(name, (name,)))
        found[name] = next((v for v in versions if v), None)
    return found


def _top_level(dist):
    """Top-level import names a distribution installs: top_level.txt (setuptools), else its RECORD's paths
    (wheels built by hatchling or flit have no top_level.txt, onedl-mmengine's among them)."""
    text = dist.read_text('top_level.txt')
    if text:
        return set(text.split())
    record = dist.read_text('RECORD') or ''
    return set(line.split('/', 1)[0] for line in record.splitlines() if '/' in line.split(',', 1)[0])


def probe_providers():
    """{import package: [(distribution, version), ...]}: every installed distribution that installs one of
    the OpenMMLab packages, in path order. Only distributions named like one (``mm`` in the name: onedl-mm*,
    mmcv-*, mmdet-*) are read, to keep the probe cheap: reading every file list takes seconds."""
    metadata = _metadata()
    if metadata is None:
        return {}
    wanted = set(package for package, _, _ in OPENMMLAB_PACKAGES)
    found, seen = {}, set()
    try:
        dists = list(metadata.distributions())
    except Exception:  # a broken metadata directory must not take the doctor down
        return {}
    for dist in dists:
        try:
            name = dist.metadata['Name'] or ''
            key = normalize_name(name)
            if 'mm' not in key or key in seen:
                continue
            seen.add(key)
            for package in sorted(_top_level(dist) & wanted):
                found.setdefault(package, []).append((name, dist.version))
        except Exception:
            continue
    return found


def fork_facts(versions, providers):
    """Facts of the forks among ``providers`` (see :func:`probe_providers`), given the upstream ``versions``
    of :func:`probe_distributions`: {fact: version} of packages only a fork installs (a 1.x mmcv fork is
    judged as mmcv-full, a 2.x one as mmcv), 'providers' {fact: distribution}, and 'package-owners'
    {package: ['dist version', ...]} where a fork and another distribution install the same package."""
    facts, named, owners = {}, {}, {}
    for package, fact, upstream in OPENMMLAB_PACKAGES:
        dists = providers.get(package, [])
        forks = [(d, v) for d, v in dists if normalize_name(d) not in upstream]
        if not forks:
            continue
        # the upstream distributions probe_distributions found, under their distribution names
        ours = [(upstream[0] if f == fact else f, versions[f]) for f in ((fact,) if package != 'mmcv' else upstream)
                if versions.get(f)]
        both = forks + ours
        if len(both) > 1:
            owners[package] = ['%s %s' % (d, v) for d, v in both]
        if ours:
            continue
        name, version = forks[0]
        if package == 'mmcv':
            fact = 'mmcv' if openmmlab_generation('mmcv', version) == 2 else 'mmcv-full'
        facts[fact] = version
        named[fact] = name
    facts['providers'] = named
    facts['package-owners'] = owners
    return facts


def conda_meta_dir(prefix=None):
    path = os.path.join(prefix or sys.prefix, 'conda-meta')
    return path if os.path.isdir(path) else None


def probe_conda_packages(prefix=None, names=('numpy', 'numpy-base', 'cudatoolkit', 'cuda-version',
                                              'cuda-nvcc', 'cuda-nvvm')):
    """{name: version} for the conda records of ``names`` in ``prefix``'s conda-meta ({} outside conda).

    Record files are '<name>-<version>-<build>.json'; the JSON's own name/version fields are preferred."""
    meta = conda_meta_dir(prefix)
    if meta is None:
        return {}
    found = {}
    for path in glob.glob(os.path.join(meta, '*.json')):
        stem = os.path.basename(path)[:-len('.json')]
        parts = stem.rsplit('-', 2)
        if len(parts) != 3 or parts[0] not in names:
            continue
        name, version = parts[0], parts[1]
        try:
            with io.open(path, encoding='utf-8') as f:
                record = json.load(f)
            name, version = record.get('name', name), record.get('version', version)
        except (OSError, ValueError):
            pass
        found[name] = version
    return found
