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
# Fact name -> distribution names to try, where they differ (mmseg is distributed as mmsegmentation).
DISTRIBUTION_NAMES = {'mmseg': ('mmsegmentation', 'mmseg')}


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
    found = {}
    for name in names:
        found[name] = None
        for dist in DISTRIBUTION_NAMES.get(name, (name,)):
            found[name] = _metadata_version(dist)
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


def probe_shm_free(path='/dev/shm'):
    """Free bytes of the shared-memory filesystem (None when it is missing)."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return st.f_frsize * st.f_bavail


def probe_nofile():
    """Soft RLIMIT_NOFILE (file descriptors), None where unsupported."""
    try:
        import resource
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, ValueError, OSError):
        return None


SHM_MANAGER_COMM = 'torch_shm_manager'[:15]  # the kernel keeps 15 characters of a command name


def probe_shm_managers(proc='/proc'):
    """Number of running torch_shm_manager processes (leaked by the file_system sharing strategy)."""
    count = 0
    for comm in glob.glob(os.path.join(proc, '[0-9]*', 'comm')):
        if (_read(comm) or '').strip() == SHM_MANAGER_COMM:
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


# Modules the import probe imports for each installed OpenMMLab package, in order (a package's later modules
# are not tried once one fails). ``.models``/``.datasets`` pull in mmcv.ops (mmcv._ext) and the datasets'
# third-party dependencies: an install that passes ``import mmdet3d`` can still fail there.
IMPORT_MODULES = (
    ('mmengine', ('mmengine', 'mmengine.runner')),
    ('mmcv', ('mmcv',)),
    ('mmdet', ('mmdet', 'mmdet.models', 'mmdet.datasets')),
    ('mmseg', ('mmseg', 'mmseg.models')),
    ('mmdet3d', ('mmdet3d', 'mmdet3d.models', 'mmdet3d.datasets')),
)

# Run in a subprocess by import_probe: one line per module, flushed, so a crash loses only the module it hit.
_IMPORT_SCRIPT = r'''
import json, sys, warnings
warnings.simplefilter('ignore')
def err(e):
    lines = [l for l in ('%s: %s' % (type(e).__name__, e)).strip().splitlines() if l.strip()]
    return (lines[0] if lines else type(e).__name__)[:300]
for group in json.loads(sys.argv[1]):
    for module in group:
        sys.stdout.write('KRADAR_DOCTOR_IMPORT_BEGIN %s\n' % module); sys.stdout.flush()
        try:
            __import__(module)
            status = 'ok'
        except BaseException as e:
            status = err(e)
        sys.stdout.write('KRADAR_DOCTOR_IMPORT %s\n' % json.dumps([module, status])); sys.stdout.flush()
        if status != 'ok':
            break
'''


def _run_imports(groups, python, timeout):
    """One interpreter importing ``groups`` (lists of modules): ({module: 'ok' or error}, died or None,
    timed_out)."""
    cmd = [python or sys.executable, '-c', _IMPORT_SCRIPT, json.dumps([list(g) for g in groups])]
    stdout, died, timed_out = '', None, False
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              universal_newlines=True)
        stdout = proc.stdout
        if proc.returncode != 0:
            tail = [l for l in proc.stderr.splitlines() if l.strip()]
            died = 'the interpreter exited with %s (%s)' % (proc.returncode, tail[-1][:200] if tail else 'no output')
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode('utf-8', 'replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
        died, timed_out = 'no answer within %d s' % timeout, True
    status, begun = {}, None
    for line in stdout.splitlines():
        if line.startswith('KRADAR_DOCTOR_IMPORT_BEGIN '):
            begun = line.split(' ', 1)[1]
        elif line.startswith('KRADAR_DOCTOR_IMPORT '):
            module, result = json.loads(line[len('KRADAR_DOCTOR_IMPORT '):])
            status[module] = result
            begun = None
    if begun is not None and died:
        status[begun] = died
    return status, died, timed_out


def import_probe(packages, python=None, timeout=300):
    """Import the IMPORT_MODULES of ``packages`` in a fresh interpreter.

    Returns {'import-errors': {package: (module, error line)}, 'imports-checked': [modules that imported]}. A
    module whose import kills the interpreter gets that as its error, and the packages not reached yet are
    imported in a new interpreter (after a timeout they are reported as not probed)."""
    groups = [(p, mods) for p, mods in IMPORT_MODULES if p in packages]
    status, pending = {}, list(groups)
    try:
        while pending:
            found, died, timed_out = _run_imports([m for _, m in pending], python, timeout)
            status.update(found)
            pending = [(p, mods) for p, mods in pending if mods[0] not in found]
            if died and not found:  # the interpreter died before its first import
                for p, mods in pending:
                    status[mods[0]] = died
            if not died or not found:
                break
            if timed_out:
                for p, mods in pending:
                    status[mods[0]] = 'not probed: an earlier import hung (%s)' % died
                break
    except OSError as e:
        return {'probe-error': 'import probe: %s' % e}
    errors, checked = {}, []
    for package, modules in groups:
        for module in modules:
            if module not in status:
                break
            if status[module] != 'ok':
                errors[package] = (module, status[module])
                break
            checked.append(module)
    return {'import-errors': errors, 'imports-checked': checked}


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
    facts['shm-free'] = probe_shm_free()
    facts['nofile'] = probe_nofile()
    facts['shm-managers'] = probe_shm_managers()
    try:
        from .pitfalls import probe_leftovers
        facts['leftovers'] = probe_leftovers()
    except OSError:
        facts['leftovers'] = None
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
        packages = set(p for p, _ in IMPORT_MODULES if facts.get(p) or (p == 'mmcv' and (
            facts.get('mmcv-full') or facts.get('mmcv-lite'))))
        if 'imports' in skip:
            packages, facts['imports-skipped'] = set(), 'assumed versions are judged, not the installed packages'
        elif not packages:
            facts['imports-skipped'] = 'no OpenMMLab package installed'
        # The two probe interpreters run side by side: each spends most of its time importing torch & co.
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=2) as pool:
            framework = pool.submit(framework_probe, want)
            imported = pool.submit(import_probe, packages) if packages else None
            found = [framework.result()] + ([imported.result()] if imported is not None else [])
        errors = [f.pop('probe-error') for f in found if f.get('probe-error')]
        for f in found:
            facts.update(f)
        if errors:
            facts['probe-error'] = '; '.join(errors)
    else:
        facts['imports-skipped'] = 'not probed in quick mode (kradar-doctor without --quick imports them)'
    return facts
