"""Installed package versions from distribution metadata and conda-meta records (nothing is imported)."""
import glob
import io
import json
import os
import platform
import sys

DISTRIBUTIONS = ('numba', 'numpy', 'torch', 'mmcv', 'mmcv-full', 'mmcv-lite', 'mmdet', 'mmdet3d', 'mmseg',
                 'mmengine', 'yapf', 'numba-cuda')
# Fact name -> distribution names to try, where they differ (mmseg is distributed as mmsegmentation).
DISTRIBUTION_NAMES = {'mmseg': ('mmsegmentation', 'mmseg')}


def metadata_version(name):
    try:
        from importlib import metadata  # novermin  (Python >= 3.8; 3.7 falls back below)
    except ImportError:  # Python 3.7
        try:
            import importlib_metadata as metadata
        except ImportError:
            metadata = None
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
        found[name] = None
        for dist in DISTRIBUTION_NAMES.get(name, (name,)):
            found[name] = metadata_version(dist)
            if found[name]:
                break
    return found


def probe_python():
    return platform.python_version()


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
