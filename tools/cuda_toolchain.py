#!/usr/bin/env python
"""NVIDIA's CUDA compilers from the package registry, and a numba 0.56 environment, cached for compile checks.

    python tools/cuda_toolchain.py toolkit 11.8    # prints a CUDA_HOME: bin/ptxas, nvvm/, lib64/libcudart
    python tools/cuda_toolchain.py nvcc 12.9       # prints the nvidia-cuda-nvcc wheel's nvidia/cuda_nvcc alone
    python tools/cuda_toolchain.py numba 0.56.4    # prints the python of a venv with that numba (pyenv's 3.10;
                                                   # 0.48.0: 3.7, EchoFusion's numba and numpy)
    python tools/cuda_toolchain.py mmdet3d 1.4.0   # prints a folder holding that mmdet3d's files (not installed)

Everything lives under ${XDG_CACHE_HOME:-~/.cache}/kradar_plugin/cuda, built once under a file lock (parallel
test workers wait for one another) and reused. Exit status 3 with one line on stderr when the registry (or
pyenv's Python) cannot be reached: the caller skips with that reason.

The wheels ship libNVVM as an unversioned ``nvvm/lib64/libnvvm.so``, which numba's own search does not match
(it then asks the system loader): put ``<CUDA_HOME>/nvvm/lib64`` first on LD_LIBRARY_PATH to make numba load
this toolkit's libNVVM. The toolkit folder links the nvcc wheel's bin/ and nvvm/ and the runtime wheel's lib/ as
lib64/ (numba <= 0.56 read the CUDA runtime's version there to choose the GPUs they compile for).
"""
import contextlib
import glob
import os
import shutil
import subprocess
import sys
import zipfile

# CUDA version -> the registry wheels (nvcc: ptxas, libNVVM, libdevice; runtime: libcudart)
TOOLKITS = {
    '11.8': ('nvidia-cuda-nvcc-cu11==11.8.89', 'nvidia-cuda-runtime-cu11==11.8.89'),
    '12.9': ('nvidia-cuda-nvcc-cu12==12.9.86', 'nvidia-cuda-runtime-cu12==12.9.79'),
}
# numba -> (Python minor from pyenv, its requirements)
NUMBA_ENVS = {'0.56.4': ('3.10', ('numba==0.56.4', 'numpy==1.23.5')),
              '0.48.0': ('3.7', ('numba==0.48.0', 'numpy==1.19.5'))}   # EchoFusion's pins
# mmdet3d wheels whose kernel files a compile check may read (put the folder on PYTHONPATH; nothing imports it)
MMDET3D_WHEELS = ('1.4.0',)
TIMEOUT = 900


class Unavailable(Exception):
    """The registry or a Python cannot be reached: the one line says which."""


def cache_root():
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'kradar_plugin', 'cuda')


@contextlib.contextmanager
def locked(root):
    """An exclusive lock on the cache (one builder at a time, the others wait and then reuse its work)."""
    import fcntl
    if not os.path.isdir(root):
        os.makedirs(root)
    with open(os.path.join(root, '.lock'), 'w') as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def run(cmd, what):
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                              timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable('%s: %s' % (what, exc))
    if proc.returncode != 0:
        lines = [l for l in proc.stdout.splitlines() if l.strip() and not l.startswith('WARNING')]
        raise Unavailable('%s failed: %s' % (what, lines[-1] if lines else 'exit status %d' % proc.returncode))


def wheel_dir(root, requirement):
    """The unpacked wheel of ``requirement`` (downloaded with pip, once)."""
    name = requirement.replace('==', '-')
    target = os.path.join(root, 'wheels', name)
    if os.path.isfile(os.path.join(target, '.complete')):
        return target
    download = os.path.join(root, 'downloads')
    run([sys.executable, '-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '-d', download,
         requirement], 'pip download %s' % requirement)
    stem = requirement.split('==')[0].replace('-', '_') + '-' + requirement.split('==')[1] + '-'
    found = sorted(glob.glob(os.path.join(download, stem + '*.whl')))
    if not found:
        raise Unavailable('pip download %s left no wheel in %s' % (requirement, download))
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(found[-1]) as whl:
        whl.extractall(target)
    for folder, _, files in os.walk(target):   # zip members lose their mode bits: ptxas must run
        if os.path.basename(folder) == 'bin':
            for f in files:
                os.chmod(os.path.join(folder, f), 0o755)
    open(os.path.join(target, '.complete'), 'w').close()
    return target


def nvcc(version):
    """nvidia/cuda_nvcc of the CUDA ``version`` nvcc wheel."""
    root = cache_root()
    with locked(root):
        return os.path.join(wheel_dir(root, TOOLKITS[version][0]), 'nvidia', 'cuda_nvcc')


def toolkit(version):
    """A CUDA_HOME for CUDA ``version``: bin/ and nvvm/ of the nvcc wheel, lib64/ of the runtime wheel."""
    root = cache_root()
    with locked(root):
        nvcc_req, runtime_req = TOOLKITS[version]
        home = os.path.join(root, 'toolkit-%s' % version)
        if not os.path.isfile(os.path.join(home, '.complete')):
            nvcc_dir = os.path.join(wheel_dir(root, nvcc_req), 'nvidia', 'cuda_nvcc')
            runtime_dir = os.path.join(wheel_dir(root, runtime_req), 'nvidia', 'cuda_runtime')
            shutil.rmtree(home, ignore_errors=True)
            os.makedirs(home)
            os.symlink(os.path.join(nvcc_dir, 'bin'), os.path.join(home, 'bin'))
            os.symlink(os.path.join(nvcc_dir, 'nvvm'), os.path.join(home, 'nvvm'))
            os.symlink(os.path.join(runtime_dir, 'lib'), os.path.join(home, 'lib64'))
            open(os.path.join(home, '.complete'), 'w').close()
        return home


def pyenv_python(minor):
    """pyenv's newest CPython ``minor`` (e.g. '3.10')."""
    try:
        base = subprocess.run(['pyenv', 'root'], stdout=subprocess.PIPE, universal_newlines=True,
                              timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        base = os.path.expanduser('~/.pyenv')
    found = sorted(glob.glob(os.path.join(base, 'versions', minor + '.*', 'bin', 'python')),
                   key=lambda p: [int(x) for x in p.split(os.sep)[-3].split('.') if x.isdigit()])
    if not found:
        raise Unavailable('no CPython %s under %s/versions (pyenv)' % (minor, base))
    return found[-1]


def numba_env(version):
    """The python of a cached venv with numba ``version`` and the numpy it supports."""
    root = cache_root()
    with locked(root):
        minor, requirements = NUMBA_ENVS[version]
        venv = os.path.join(root, 'venv-numba-%s' % version)
        python = os.path.join(venv, 'bin', 'python')
        if not os.path.isfile(os.path.join(venv, '.complete')):
            shutil.rmtree(venv, ignore_errors=True)
            run([pyenv_python(minor), '-m', 'venv', venv], 'python%s -m venv' % minor)
            run([python, '-m', 'pip', 'install', '--disable-pip-version-check', '-q'] + list(requirements),
                'pip install %s' % ' '.join(requirements))
            open(os.path.join(venv, '.complete'), 'w').close()
        return python


def mmdet3d_files(version):
    """The unpacked mmdet3d ``version`` wheel (its mmdet3d/ package folder inside)."""
    root = cache_root()
    with locked(root):
        return wheel_dir(root, 'mmdet3d==%s' % version)


def main(argv):
    commands = {'toolkit': (toolkit, TOOLKITS), 'nvcc': (nvcc, TOOLKITS), 'numba': (numba_env, NUMBA_ENVS),
                'mmdet3d': (mmdet3d_files, MMDET3D_WHEELS)}
    if len(argv) != 3 or argv[1] not in commands or argv[2] not in commands[argv[1]][1]:
        sys.stderr.write('usage: cuda_toolchain.py toolkit|nvcc %s | numba %s | mmdet3d %s\n'
                         % ('|'.join(sorted(TOOLKITS)), '|'.join(sorted(NUMBA_ENVS)), '|'.join(MMDET3D_WHEELS)))
        return 2
    try:
        print(commands[argv[1]][0](argv[2]))
    except Unavailable as exc:
        sys.stderr.write('cuda_toolchain: %s\n' % exc)
        return 3
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
