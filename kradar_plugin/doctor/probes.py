"""Probes: gather version facts from the live environment without importing the frameworks.

Every probe tolerates a missing package (returns None) and is cheap: distribution metadata, files under
conda-meta, /proc, /dev/shm, CUDA install directories. Facts that need torch/mmcv/numba imported come from
``framework_probe`` which imports them in a SUBPROCESS (a broken build or segfault cannot take the doctor
down), or from modules the caller already imported (``sys.modules``) in quick mode.
"""
import glob
import importlib
import io
import json
import os
import platform
import re
import subprocess
import sys

from ..compat.versions import normalize_name
from ..compat.nvidia_driver import PROC_VERSION, driver_version

DISTRIBUTIONS = ('numba', 'numpy', 'torch', 'mmcv', 'mmcv-full', 'mmcv-lite', 'mmdet', 'mmdet3d', 'mmseg',
                 'mmengine', 'yapf', 'numba-cuda')


def _metadata_version(name):
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
    return dict((name, _metadata_version(name)) for name in names)


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


def _read(path):
    try:
        with io.open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    except (OSError, IOError):
        return None


def cuda_home_candidates():
    homes = [os.environ.get(k) for k in ('CUDA_HOME', 'CUDA_PATH', 'CUDA_ROOT')]
    homes.append('/usr/local/cuda')
    return [h for h in homes if h and os.path.isdir(h)]


def toolkit_version_from_home(home):
    """CUDA toolkit version of an install directory from version.json / version.txt (None if absent)."""
    text = _read(os.path.join(home, 'version.json'))
    if text:
        try:
            return json.loads(text)['cuda']['version']
        except (ValueError, KeyError, TypeError):
            pass
    text = _read(os.path.join(home, 'version.txt'))
    if text:
        match = re.search(r'CUDA Version\s+([\d.]+)', text)
        if match:
            return match.group(1)
    match = re.search(r'cuda-(\d+\.\d+)', os.path.realpath(home))
    return match.group(1) if match else None


def probe_cuda_toolkit(conda=None):
    """The CUDA toolkit numba would use, in numba's search order: conda packages, then CUDA_HOME & co.

    Returns (version or None, where it was found)."""
    conda = probe_conda_packages() if conda is None else conda
    for name in ('cudatoolkit', 'cuda-nvvm', 'cuda-nvcc', 'cuda-version'):
        if conda.get(name):
            return conda[name], 'conda:%s' % name
    nvcc = _metadata_version('nvidia-cuda-nvcc-cu12') or _metadata_version('nvidia-cuda-nvcc-cu11')
    if nvcc:
        return nvcc, 'pip:nvidia-cuda-nvcc'
    for home in cuda_home_candidates():
        version = toolkit_version_from_home(home)
        if version:
            return version, home
    return None, None


def probe_libnvvm():
    """Path of a libNVVM that numba can load, or None (numba's NvvmSupportError in pip-only envs)."""
    dirs = [os.path.join(sys.prefix, 'lib'), os.path.join(sys.prefix, 'nvvm', 'lib64')]
    dirs += [os.path.join(h, 'nvvm', 'lib64') for h in cuda_home_candidates()]
    dirs += [os.path.join(h, 'nvvm', 'lib') for h in cuda_home_candidates()]
    dirs += [os.path.join(h, sub) for h in cuda_home_candidates() for sub in ('lib', 'lib64')]  # CUDA >= 13
    dirs += [d for d in os.environ.get('LD_LIBRARY_PATH', '').split(os.pathsep) if d]
    for site in sys.path:
        dirs.append(os.path.join(site, 'nvidia', 'cuda_nvcc', 'nvvm', 'lib64'))
    for d in dirs:
        hits = sorted(glob.glob(os.path.join(d, 'libnvvm.so*')) + glob.glob(os.path.join(d, 'nvvm*.dll')))
        if hits:
            return hits[0]
    return None


def probe_driver(proc_path=PROC_VERSION):
    """NVIDIA driver version from the kernel module ('535.104.05'), None without a driver."""
    return driver_version(proc_path, use_smi=False)


def probe_gpu_count(proc_dir='/proc/driver/nvidia/gpus'):
    """Number of NVIDIA GPUs the kernel driver sees (0 without a driver)."""
    try:
        return len(os.listdir(proc_dir))
    except OSError:
        return 0


def probe_shm(path='/dev/shm'):
    """Total bytes of the shared-memory filesystem DataLoader workers use (None when it is missing)."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return st.f_frsize * st.f_blocks


def probe_nofile():
    """Soft RLIMIT_NOFILE (file descriptors), None where unsupported."""
    try:
        import resource
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, ValueError, OSError):
        return None


def probe_shm_managers(proc='/proc'):
    """Number of running torch_shm_manager processes (leaked by the file_system sharing strategy)."""
    count = 0
    for comm in glob.glob(os.path.join(proc, '[0-9]*', 'comm')):
        if (_read(comm) or '').strip() == 'torch_shm_manager':
            count += 1
    return count


def package_dir(module):
    """Directory of an installed top-level package WITHOUT importing it (None if not installed)."""
    try:
        import importlib.util
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def probe_mmcv_ext_file():
    """Whether mmcv's compiled extension (mmcv._ext) is on disk: True/False, None without mmcv."""
    d = package_dir('mmcv')
    if d is None:
        return None
    return bool(glob.glob(os.path.join(d, '_ext*.so')) + glob.glob(os.path.join(d, '_ext*.pyd')))


_RANGE_RE = re.compile(r"""^\s*(mmcv|mmdet|mmseg|mmengine)_(minimum|maximum)_version\s*=\s*['"]([^'"]+)['"]""",
                       re.M)
_MMSEG_RE = re.compile(r"""^\s*MMCV_(MIN|MAX)\s*=\s*['"]([^'"]+)['"]""", re.M)


def parse_version_asserts(source):
    """{dependency: (min, max, max_inclusive, enforced)} from an OpenMMLab package's __init__.py text.

    enforced is False for 'relaxed' checks that only warn (mmdet3d forks, 1.x)."""
    ranges = {}
    for dep, which, value in _RANGE_RE.findall(source):
        ranges.setdefault(dep, {})[which] = value
    for which, value in _MMSEG_RE.findall(source):
        ranges.setdefault('mmcv', {})['minimum' if which == 'MIN' else 'maximum'] = value
    result = {}
    for dep, bounds in ranges.items():
        inclusive = not re.search(r'<\s*digit_version\(\s*%s_maximum_version' % dep, source) and \
            not re.search(r'<\s*MMCV_MAX', source)
        enforced = bool(re.search(r'assert|raise', source))
        result['mmcv-full' if dep == 'mmcv' else dep] = (bounds.get('minimum'), bounds.get('maximum'),
                                                         inclusive, enforced)
    return result


def probe_installed_ranges(packages=('mmdet', 'mmdet3d', 'mmseg')):
    """{package: parse_version_asserts(its __init__.py)} for installed packages, read as text."""
    found = {}
    for package in packages:
        d = package_dir(package)
        source = _read(os.path.join(d, '__init__.py')) if d else None
        if source:
            found[package] = parse_version_asserts(source)
    return found


# Run in a subprocess by framework_probe: imports what it is asked to and prints one JSON line.
_FRAMEWORK_SCRIPT = r'''
import json, sys
want = set(sys.argv[1].split(','))
out = {}
def err(e):
    return ('%s: %s' % (type(e).__name__, e)).strip().splitlines()[-1][:300]
if 'numpy' in want:
    try:
        import numpy; out['numpy-runtime'] = numpy.__version__
    except Exception as e:
        out['numpy-import'] = err(e)
if 'numba' in want:
    try:
        import numba; out['numba-import'] = 'ok'; out['numba-runtime'] = numba.__version__
    except Exception as e:
        out['numba-import'] = err(e)
if 'torch' in want:
    try:
        import torch
        out['torch-runtime'] = torch.__version__
        out['torch-cuda'] = torch.version.cuda or 'cpu'
        import torch.multiprocessing as mp
        out['sharing-strategy'] = mp.get_sharing_strategy()
        if torch.cuda.is_available():
            n = torch.cuda.device_count()
            out['gpus'] = n
            out['gpu-cc'] = ['%d.%d' % torch.cuda.get_device_capability(i) for i in range(n)]
            out['torch-arch'] = list(torch.cuda.get_arch_list())
        else:
            out['torch-cuda-available'] = False
    except Exception as e:
        out['torch-import'] = err(e)
if 'mmcv' in want:
    try:
        import mmcv._ext  # noqa: F401
        out['mmcv-ext'] = 'ok'
    except Exception as e:
        out['mmcv-ext'] = err(e)
    try:
        from mmcv.ops import get_compiling_cuda_version
        out['mmcv-cuda'] = get_compiling_cuda_version()
    except Exception:
        pass
print('KRADAR_DOCTOR_JSON ' + json.dumps(out))
'''


def framework_probe(want, python=None, timeout=300):
    """Import ``want`` (subset of numpy, numba, torch, mmcv) in a fresh interpreter and report facts.

    Returns a dict; on a crash or timeout it holds 'probe-error' with the last stderr line."""
    if not want:
        return {}
    cmd = [python or sys.executable, '-c', _FRAMEWORK_SCRIPT, ','.join(sorted(want))]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              universal_newlines=True)
    except subprocess.TimeoutExpired:
        return {'probe-error': 'importing %s took longer than %d s' % (', '.join(sorted(want)), timeout)}
    except OSError as e:
        return {'probe-error': str(e)}
    for line in proc.stdout.splitlines():
        if line.startswith('KRADAR_DOCTOR_JSON '):
            return json.loads(line[len('KRADAR_DOCTOR_JSON '):])
    tail = [l for l in proc.stderr.splitlines() if l.strip()]
    return {'probe-error': 'importing %s exited with %s: %s' % (', '.join(sorted(want)), proc.returncode,
                                                                tail[-1] if tail else 'no output')}


def loaded_framework_facts():
    """The framework facts available from modules the caller already imported (no new imports)."""
    out = {}
    numpy = sys.modules.get('numpy')
    if numpy is not None and getattr(numpy, '__version__', None):
        out['numpy-runtime'] = numpy.__version__
    torch = sys.modules.get('torch')
    if torch is not None and getattr(torch, 'version', None) is not None:
        out['torch-runtime'] = torch.__version__
        out['torch-cuda'] = torch.version.cuda or 'cpu'
        try:
            out['sharing-strategy'] = torch.multiprocessing.get_sharing_strategy()
        except Exception:
            pass
    if 'mmcv._ext' in sys.modules:
        out['mmcv-ext'] = 'ok'
    return out


def gather(quick=False, skip=()):
    """All live facts as {key: value}. ``skip``: fact groups that --assume replaces (not probed)."""
    dists = probe_distributions()
    conda = probe_conda_packages()
    facts = {'python': probe_python(), 'conda': bool(conda_meta_dir())}
    for name, version in dists.items():
        facts[normalize_name(name)] = version
    if conda.get('numpy'):
        facts['numpy'] = conda['numpy']  # what conda says is installed; numpy-base is what imports
    facts['numpy-base'] = conda.get('numpy-base')
    if 'cuda' not in skip:
        facts['cuda'], facts['cuda-source'] = probe_cuda_toolkit(conda)
        facts['libnvvm'] = probe_libnvvm()
    facts['driver'] = probe_driver()
    facts['gpus'] = probe_gpu_count()
    facts['shm'] = probe_shm()
    facts['nofile'] = probe_nofile()
    facts['shm-managers'] = probe_shm_managers()
    facts['mmcv-ext-file'] = probe_mmcv_ext_file()
    facts['installed-ranges'] = probe_installed_ranges()
    facts.update(loaded_framework_facts())
    if not quick:
        want = set()
        if facts.get('numpy') and 'numpy' not in skip:
            want.add('numpy')
        if facts.get('numba') and 'numba' not in skip:
            want.update(('numba', 'numpy'))
        if facts.get('torch') and 'torch' not in skip:
            want.add('torch')
        if (facts.get('mmcv-full') or facts.get('mmcv')) and 'mmcv' not in skip:
            want.add('mmcv')
        facts.update(framework_probe(want))
    return facts
