"""The child of ``--compile-test``: compile mmdet3d's and the plugin's rotated-IoU kernels with this environment's
numba, through the libNVVM numba loads, to PTX, then with that toolkit's ptxas to SASS, for each architecture.

Run only as ``python -m kradar_plugin.doctor.probes.cuda_compile_child '{"archs": [...], ...}'`` by
``cuda_compile.run_cuda_compile``: a crash or a hang here (libNVVM, a driver) cannot take the doctor down. It
prints one line, ``KRADAR_CUDA_COMPILE <json>``. Nothing is guessed: each failure is the compiler's own message.
No GPU is needed: numba 0.48 (no ``compile_ptx``) goes through ``compile_kernel`` and ``nvvm.llvm_to_ptx``.
"""
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MARK = 'KRADAR_CUDA_COMPILE '
# The plugin's kernel with the arrays the backend launches it with (C-contiguous float64).
OURS = ('kradar_plugin.ops.cuda_kernel', 'intersections',
        'void(float64[:, ::1], float64[:, :, ::1], float64[:, ::1], float64[:, ::1])')


def last_line(exc):
    """'Type: message' on one line: the compiler's own words, its status code (NVVM_ERROR_...) dropped."""
    lines = [l.strip() for l in str(exc).splitlines() if l.strip() and not l.strip().startswith('NVVM_ERROR')]
    text = ' '.join(lines)
    return ('%s: %s' % (type(exc).__name__, text))[:500]


def loaded_library(stem):
    """Absolute path of the shared library ``stem`` (e.g. 'libnvvm') mapped into this process, or None."""
    try:
        with open('/proc/self/maps') as f:
            for line in f:
                path = line.split()[-1]
                if os.path.basename(path).startswith(stem + '.'):
                    return path
    except (IOError, OSError):
        pass
    return None


def toolkit_root(libnvvm):
    """The toolkit folder of a libNVVM: <root>/nvvm/lib64/libnvvm.so (CUDA <= 12, the pip wheels) or
    <root>/lib[64]/libnvvm.so (CUDA 13)."""
    here = os.path.dirname(os.path.realpath(libnvvm))
    parent = os.path.dirname(here)
    if os.path.basename(parent) == 'nvvm':
        return os.path.dirname(parent)
    return parent


def ptxas_version(ptxas, timeout):
    """'11.8' from ``ptxas --version`` ('Cuda compilation tools, release 11.8, V11.8.89')."""
    try:
        out = subprocess.run([ptxas, '--version'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=timeout).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'release (\d+\.\d+)', out)
    return match.group(1) if match else None


def find_toolkit(timeout):
    """The toolkit numba uses: load its libNVVM the way numba does, then read where it came from."""
    from numba.cuda.cudadrv import nvvm
    out = {'cuda-home': os.environ.get('CUDA_HOME')}
    if out['cuda-home']:   # what CUDA_HOME offers (numba's search matches only versioned libnvvm.so.X names)
        out['cuda-home-libnvvm'] = sorted(glob.glob(os.path.join(out['cuda-home'], 'nvvm', 'lib64', 'libnvvm.so*')))
    try:   # numba's own load first: its error is the one a user meets (NvvmSupportError: libNVVM cannot be found)
        version = nvvm.NVVM().get_version()
        out['nvvm-version'] = '%d.%d' % tuple(version[:2])
    except Exception as exc:  # noqa: BLE001 - NvvmSupportError, OSError of a garbage library
        out['error'] = last_line(exc)
        named = re.search(r'(/\S+?\.so[\w.]*)', out['error'])
        if named and os.path.isfile(named.group(1)) and 'No such file' in out['error']:
            # glibc says "No such file" for a library of another architecture
            out['error'] += ' (the file exists: not a library this machine can load)'
        return out
    try:
        from numba.cuda.cuda_paths import get_cuda_paths
        paths = get_cuda_paths()
        found = paths.get('nvvm')
        out['found-by'] = getattr(found, 'by', None)
        out['numba-found-libnvvm'] = getattr(found, 'info', None)   # None: numba leaves it to the system loader
        libdevice = getattr(paths.get('libdevice'), 'info', None)
        out['libdevice'] = sorted(libdevice.values())[0] if isinstance(libdevice, dict) and libdevice else libdevice
    except Exception as exc:  # noqa: BLE001 - only what numba's search says, the load above decided
        out['paths-error'] = last_line(exc)
    lib = loaded_library('libnvvm')
    out['libnvvm'] = lib
    if out.get('cuda-home-libnvvm') and lib:
        out['cuda-home-libnvvm-used'] = any(os.path.realpath(p) == os.path.realpath(lib)
                                            for p in out['cuda-home-libnvvm'])
    if lib is None:
        return out
    root = toolkit_root(lib)
    home = out['cuda-home']
    if home and os.path.realpath(os.path.join(home, 'nvvm')) in (os.path.join(root, 'nvvm'), os.path.dirname(lib)):
        root = home   # CUDA_HOME is that toolkit (perhaps a folder of links to it): name it as the user does
    out['root'] = root
    ptxas = os.path.join(root, 'bin', 'ptxas')
    out['ptxas'] = ptxas if os.path.isfile(ptxas) and os.access(ptxas, os.X_OK) else None
    out['version'] = ptxas_version(ptxas, timeout) if out['ptxas'] else None
    try:  # numba <= 0.56 chooses the GPUs it may compile for from the CUDA runtime's version
        from numba.cuda.cudadrv.runtime import runtime
        out['runtime-version'] = '%d.%d' % tuple(runtime.get_version())
    except Exception as exc:  # noqa: BLE001 - no libcudart (numba 0.57+ do not need one to compile), or
        out['runtime-version'] = None   # CUDA 11.x's, which answers cudaErrorUnknown without a driver
        out['runtime-error'] = last_line(exc)
    return out


class Declared(object):
    """A kernel as a module declares it: its Python function, signature and options (not compiled)."""

    def __init__(self, name, func, sig, options):
        self.name, self.func, self.sig, self.options = name, func, sig, options


def load_declared(path, name):
    """Execute the module file ``path`` with ``numba.cuda.jit`` recording the kernels it declares with a
    signature (compiled at import, which needs a driver) instead of compiling them; device functions and
    lazy kernels are the real ``cuda.jit``'s."""
    from numba import cuda
    real = cuda.jit
    declared = []

    def recording_jit(func_or_sig=None, device=False, **kws):
        if device or func_or_sig is None or callable(func_or_sig):
            return real(func_or_sig, device=device, **kws)

        def declare(func):
            declared.append(Declared(func.__name__, func, func_or_sig, kws))
            return func
        return declare

    spec = importlib.util.spec_from_file_location('kradar_compile_check_%s' % name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # numba resolves a jitted function's globals through its module's name
    cuda.jit = recording_jit
    try:
        spec.loader.exec_module(module)
    finally:
        cuda.jit = real
    return declared


class TargetDevice(object):
    """What numba's device-function compile asks the driver for, answered with the target architecture."""

    def __init__(self, cc):
        self.compute_capability = cc


def compile_ptx(func, sig, cc, options, target_device=False):
    """PTX text of kernel ``func`` for compute capability ``cc`` with this numba, without a driver."""
    from numba import cuda
    try:
        from numba.core import sigutils
    except ImportError:  # numba < 0.49
        from numba import sigutils
    argtypes, _ = sigutils.normalize_signature(sig)   # numba 0.5x's compile_ptx takes the argument types
    fastmath = bool(options.get('fastmath', False))
    if hasattr(cuda, 'compile_ptx'):
        patched = None
        if target_device:
            # numba >= 0.58 compiles each called device function for get_current_device()'s compute
            # capability, which needs a driver; on a GPU-less node that is the architecture compiled for.
            import numba.cuda.dispatcher as dispatcher
            patched = getattr(dispatcher, 'get_current_device', None)
            if patched is not None:
                dispatcher.get_current_device = lambda: TargetDevice(cc)
        try:
            ptx, _ = cuda.compile_ptx(func, argtypes, cc=cc, fastmath=fastmath)
        finally:
            if patched is not None:
                dispatcher.get_current_device = patched
        return ptx
    # numba < 0.50: no compile_ptx. Build the kernel's NVVM IR (no driver), then libNVVM -> PTX.
    from numba.cuda.compiler import compile_kernel
    from numba.cuda.cudadrv import nvvm
    kernel = compile_kernel(func, argtypes, link=(), debug=False, inline=False, fastmath=fastmath)
    cached = kernel._func.ptx
    ptx = nvvm.llvm_to_ptx(cached.llvmir, opt=3, arch='compute_%d%d' % cc, **cached._extra_options)
    return ptx.decode('utf-8') if isinstance(ptx, bytes) else ptx


def ptx_header(ptx):
    version = re.search(r'^\s*\.version\s+(\d+\.\d+)', ptx, re.M)
    target = re.search(r'^\s*\.target\s+(\w+)', ptx, re.M)
    return (version.group(1) if version else None), (target.group(1) if target else None)


def assemble(ptxas, ptx, arch, timeout):
    """(ok, detail): ptxas PTX -> cubin for ``arch`` ('sm_80'), bounded by ``timeout``."""
    tmp = tempfile.mkdtemp(prefix='kradar-ptxas-')
    src, dst = os.path.join(tmp, 'kernel.ptx'), os.path.join(tmp, 'kernel.cubin')
    try:
        with open(src, 'w') as f:
            f.write(ptx)
        try:
            proc = subprocess.run([ptxas, '-arch=%s' % arch, src, '-o', dst], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, universal_newlines=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, 'ptxas did not finish within %g s (%s)' % (timeout, ptxas)
        except OSError as exc:
            return False, 'ptxas could not run: %s' % exc
        if proc.returncode == 0 and os.path.isfile(dst):
            return True, '%d-byte cubin' % os.path.getsize(dst)
        lines = [l.strip() for l in proc.stdout.splitlines() if l.strip() and 'assembly aborted' not in l]
        return False, 'ptxas: %s' % (lines[-1] if lines else 'exit status %d' % proc.returncode)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compile_one(kernel, func, sig, options, arch, toolkit, ptxas_timeout, target_device, ptx_dir=None):
    """One row of the report: kernel x architecture, through PTX and (when ptxas is there) SASS."""
    cc = (int(arch[3:-1]), int(arch[-1]))
    row = {'kernel': kernel, 'arch': arch}
    start = time.time()
    try:
        ptx = compile_ptx(func, sig, cc, options, target_device)
    except Exception as exc:  # noqa: BLE001 - NvvmError, NvvmSupportError, CudaSupportError, typing errors
        row.update(status='fail', stage='ptx', error=last_line(exc), seconds=round(time.time() - start, 3))
        return row
    row['ptx-seconds'] = round(time.time() - start, 3)
    row['ptx-version'], row['ptx-target'] = ptx_header(ptx)
    if ptx_dir:   # kept for a look, or for another ptxas (tests/doctor/test_cuda_compile.py)
        name = re.sub(r'[^A-Za-z0-9_.-]+', '_', kernel.split(' ')[0] + '-' + kernel.split(':')[-1])
        row['ptx-file'] = os.path.join(ptx_dir, '%s-%s.ptx' % (name, arch))
        with open(row['ptx-file'], 'w') as f:
            f.write(ptx)
    if not toolkit.get('ptxas'):
        row.update(status='ok', stage='ptx', detail='PTX only: no ptxas in the toolkit folder')
        return row
    start = time.time()
    ok, detail = assemble(toolkit['ptxas'], ptx, arch, ptxas_timeout)
    row.update(status='ok' if ok else 'fail', stage='sass', detail=detail)
    row['sass-seconds'] = round(time.time() - start, 3)
    if not ok:
        row['error'] = detail
    return row


def mmdet3d_kernel_files():
    """The rotate_iou.py files beside the KITTI evaluation (kitti_utils/eval.py) of the installed mmdet3d,
    which imports them from there: 0.17-1.0 core/evaluation/kitti_utils, 1.1+ evaluation/functional/kitti_utils."""
    spec = importlib.util.find_spec('mmdet3d')
    if spec is None or not spec.submodule_search_locations:
        return []
    found = []
    for top in spec.submodule_search_locations:
        for folder, _, files in os.walk(top):
            if 'rotate_iou.py' in files and 'eval.py' in files:
                with open(os.path.join(folder, 'eval.py')) as f:
                    if 'rotate_iou' in f.read():
                        found.append(os.path.join(folder, 'rotate_iou.py'))
    return sorted(found)


def mmdet3d_version(path):
    """The version of the mmdet3d whose kernel file is ``path``: its installed metadata, else the dist-info
    beside the package folder (files on PYTHONPATH), else None."""
    package = path[:path.rindex(os.sep + 'mmdet3d' + os.sep) + len(os.sep + 'mmdet3d')]
    for info in sorted(glob.glob(os.path.join(os.path.dirname(package), 'mmdet3d-*.*-info'))):
        match = re.match(r'mmdet3d-(.+?)(-py[\d.]+)?\.(dist|egg)-info$', os.path.basename(info))
        if match:
            return match.group(1)
    from kradar_plugin.doctor.probes.packages import metadata_version
    return metadata_version('mmdet3d')


def kernels(only=None):
    """[(label, func, signature, options, target_device) or (label, error)] for every kernel to compile (``only``:
    'mmdet3d' or 'kradar_plugin', one side alone: a cold process for each, as the benchmark times them)."""
    out = []
    for path in (mmdet3d_kernel_files() if only in (None, 'mmdet3d') else ()):
        label = 'mmdet3d %s %s' % (mmdet3d_version(path) or '?', path)
        try:
            declared = load_declared(path, 'mmdet3d')
        except Exception as exc:  # noqa: BLE001 - a module that does not load: say how
            out.append((label, last_line(exc)))
            continue
        for d in declared:
            out.append(('%s:%s' % (label, d.name), d.func, d.sig, d.options, True))
    if only not in (None, 'kradar_plugin'):
        return out
    module, name, sig = OURS
    try:
        func = getattr(importlib.import_module(module), name)
    except Exception as exc:  # noqa: BLE001
        out.append(('kradar_plugin %s' % name, last_line(exc)))
    else:
        out.append(('kradar_plugin %s' % name, func, sig, {}, False))
    return out


def gpu_run():
    """With a GPU: the plugin's kernel run there against the numpy backend on the backends' trial boxes."""
    from numba import cuda
    if not cuda.is_available():
        return None
    try:
        import numpy as np
        from kradar_plugin.ops import backend_numba_cuda, backend_numpy
        from kradar_plugin.ops.numba_gate import TRIAL_BOXES
        query = TRIAL_BOXES[::-1].copy()
        got = backend_numba_cuda.intersection_areas(TRIAL_BOXES, query)
        error = float(np.abs(got - backend_numpy.intersection_areas(TRIAL_BOXES, query)).max())
    except Exception as exc:  # noqa: BLE001 - a launch error (driver, PTX version) in the GPU's own words
        return {'status': 'fail', 'error': last_line(exc)}
    return {'status': 'ok' if error <= 1e-9 else 'fail', 'max-error': error}


def main(argv):
    args = json.loads(argv[1]) if len(argv) > 1 else {}
    archs = args.get('archs') or ['sm_70', 'sm_80', 'sm_90']
    ptxas_timeout = float(args.get('ptxas_timeout', 120))
    doc = {'python': '%d.%d.%d' % sys.version_info[:3], 'archs': archs, 'rows': []}
    try:
        import numba
        doc['numba'] = numba.__version__
        toolkit = find_toolkit(ptxas_timeout)
    except Exception as exc:  # noqa: BLE001 - numba that does not import
        doc['error'] = last_line(exc)
        print(MARK + json.dumps(doc))
        return 0
    doc['toolkit'] = toolkit
    if toolkit.get('error'):
        doc['error'] = toolkit['error']
    else:
        for item in kernels(args.get('only')):
            if len(item) == 2:
                doc['rows'].append({'kernel': item[0], 'status': 'fail', 'stage': 'load', 'error': item[1]})
                continue
            label, func, sig, options, target_device = item
            for arch in archs:
                row = compile_one(label, func, sig, options, arch, toolkit, ptxas_timeout, target_device,
                                  args.get('ptx_dir'))
                doc['rows'].append(row)
        doc['gpu-run'] = gpu_run()
    print(MARK + json.dumps(doc))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
