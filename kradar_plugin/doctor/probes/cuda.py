"""The CUDA toolkit numba would use, libNVVM, the NVIDIA driver and the GPUs it sees (files only)."""
import glob
import json
import os
import re
import sys

from ...facts.nvidia_driver import PROC_VERSION, driver_version
from .files import read_text
from .packages import metadata_version, probe_conda_packages


def cuda_home_candidates():
    homes = [os.environ.get(k) for k in ('CUDA_HOME', 'CUDA_PATH', 'CUDA_ROOT')]
    homes.append('/usr/local/cuda')
    return [h for h in homes if h and os.path.isdir(h)]


def toolkit_version_from_home(home):
    """CUDA toolkit version of an install directory from version.json / version.txt (None if absent)."""
    text = read_text(os.path.join(home, 'version.json'))
    if text:
        try:
            return json.loads(text)['cuda']['version']
        except (ValueError, KeyError, TypeError):
            pass
    text = read_text(os.path.join(home, 'version.txt'))
    if text:
        match = re.search(r'CUDA Version\s+([\d.]+)', text)
        if match:
            return match.group(1)
    match = re.search(r'cuda-(\d+\.\d+)', os.path.realpath(home))
    if match:
        return match.group(1)
    return nvcc_wheel_version(home)


def nvcc_wheel_version(home):
    """'11.8.89' of the nvidia-cuda-nvcc wheel a toolkit folder comes from: its own dist-info/ (CUDA 13's
    layout) or the wheel's, two levels above nvidia/cuda_nvcc (also through a folder of links to it)."""
    nvvm = os.path.realpath(os.path.join(home, 'nvvm'))
    for base in (home, os.path.dirname(nvvm)):
        patterns = (os.path.join(base, 'dist-info', 'nvidia_cuda_nvcc*-*.dist-info'),
                    os.path.join(base, os.pardir, os.pardir, 'nvidia_cuda_nvcc*-*.dist-info'))
        for pattern in patterns:
            for hit in sorted(glob.glob(pattern)):
                match = re.search(r'-(\d+\.\d+(?:\.\d+)*)\.dist-info$', hit)
                if match:
                    return match.group(1)
    return None


def probe_cuda_toolkit(conda=None):
    """The CUDA toolkit numba would use, in numba's search order: conda packages, then CUDA_HOME & co.

    Returns (version or None, where it was found)."""
    conda = probe_conda_packages() if conda is None else conda
    for name in ('cudatoolkit', 'cuda-nvvm', 'cuda-nvcc', 'cuda-version'):
        if conda.get(name):
            return conda[name], 'conda:%s' % name
    nvcc = metadata_version('nvidia-cuda-nvcc-cu12') or metadata_version('nvidia-cuda-nvcc-cu11')
    if nvcc:
        return nvcc, 'pip:nvidia-cuda-nvcc'
    for home in cuda_home_candidates():
        version = toolkit_version_from_home(home)
        if version:
            return version, home
    return None, None


def probe_libnvvm():
    """Path of a libNVVM that numba can load, or None (numba's NvvmSupportError in pip-only envs)."""
    homes = cuda_home_candidates()
    dirs = [os.path.join(sys.prefix, 'lib'), os.path.join(sys.prefix, 'nvvm', 'lib64')]
    dirs += [os.path.join(h, 'nvvm', sub) for sub in ('lib64', 'lib') for h in homes]
    dirs += [os.path.join(h, sub) for h in homes for sub in ('lib', 'lib64')]  # CUDA >= 13
    dirs += [d for d in os.environ.get('LD_LIBRARY_PATH', '').split(os.pathsep) if d]
    dirs += [os.path.join(site, 'nvidia', 'cuda_nvcc', 'nvvm', 'lib64') for site in sys.path]
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
