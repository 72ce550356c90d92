"""What a real CUDA compile says: the PTX ISA each toolkit emits, the driver that PTX needs, the GPU
architectures, and the known compile failures with their fixes (``--compile-test``'s judge reads them).

Sources: NVIDIA's PTX ISA release notes (ISA <-> CUDA), the CUDA release notes (``cuda.CUDA_MIN_DRIVER``), and
compiles run on this project's machines (``kradar-doctor --compile-test`` with numba 0.48, 0.56.4, 0.68.1 and
CUDA 11.8 / 12.9 wheels and CUDA 13.0; tests/doctor/test_cuda_compile.py re-runs them): the rows marked
``measured`` below were printed by NVIDIA's own ptxas/libNVVM, the others are read from the release notes.
"""
import collections
import re

from .cuda import CUDA_MIN_DRIVER, driver_max_cuda
from .versions import major_minor, parse_version

# PTX ISA version -> the CUDA toolkit that introduced it (its libNVVM emits it, its ptxas accepts up to it).
# measured here: 7.8 (CUDA 11.8), 8.8 (12.9), 9.0 (13.0): ``.version`` of numba's PTX and ptxas's "Unsupported
# .version X; current version is 'Y'".
PTX_ISA_CUDA = (
    ('6.0', '9.0'), ('6.1', '9.1'), ('6.2', '9.2'), ('6.3', '10.0'), ('6.4', '10.1'), ('6.5', '10.2'),
    ('7.0', '11.0'), ('7.1', '11.1'), ('7.2', '11.2'), ('7.3', '11.3'), ('7.4', '11.4'), ('7.5', '11.5'),
    ('7.6', '11.6'), ('7.7', '11.7'), ('7.8', '11.8'), ('8.0', '12.0'), ('8.1', '12.1'), ('8.2', '12.2'),
    ('8.3', '12.3'), ('8.4', '12.4'), ('8.5', '12.5'), ('8.6', '12.7'), ('8.7', '12.8'), ('8.8', '12.9'),
    ('9.0', '13.0'),
)
PTX_ISA_MEASURED = ('7.8', '8.8', '9.0')

# GPU architectures a compile may target (sm_XY: compute capability X.Y). ptxas and libNVVM of each toolkit
# say which of them they still support (CUDA 13 dropped sm_50..sm_72).
KNOWN_ARCHS = ('sm_50', 'sm_52', 'sm_53', 'sm_60', 'sm_61', 'sm_62', 'sm_70', 'sm_72', 'sm_75', 'sm_80',
               'sm_86', 'sm_87', 'sm_89', 'sm_90', 'sm_100', 'sm_101', 'sm_103', 'sm_110', 'sm_120', 'sm_121')
# Without a GPU: one architecture per data-centre generation a cluster has (V100, A100, H100).
DEFAULT_ARCHS = ('sm_70', 'sm_80', 'sm_90')


def parse_archs(text):
    """'sm_80,sm_90' (or '8.0/9.0', '80') -> ['sm_80', 'sm_90']; ValueError names an unknown one."""
    archs = []
    for item in re.split(r'[,/\s]+', str(text or '').strip()):
        if not item:
            continue
        digits = item.lower().replace('sm_', '').replace('compute_', '').replace('.', '')
        arch = 'sm_' + digits
        if arch not in KNOWN_ARCHS:
            raise ValueError('--gpu-arch: unknown architecture %r (known: %s)' % (item, ', '.join(KNOWN_ARCHS)))
        if arch not in archs:
            archs.append(arch)
    if not archs:
        raise ValueError('--gpu-arch: no architecture given (e.g. --gpu-arch sm_80,sm_90)')
    return archs


def arch_of_cc(cc):
    """'8.6' -> 'sm_86'."""
    return 'sm_' + str(cc).replace('.', '')


def ptx_isa_cuda(isa):
    """The CUDA toolkit that introduced PTX ISA ``isa`` ('9.0' -> '13.0'); None when not in the table."""
    return dict(PTX_ISA_CUDA).get(major_minor(isa))


def max_ptx_isa(cuda):
    """The newest PTX ISA a CUDA ``cuda`` driver (or ptxas) accepts ('12.2' -> '8.2'); None when unknown."""
    v = parse_version(cuda)
    if v is None:
        return None
    isas = [isa for isa, introduced in PTX_ISA_CUDA if parse_version(introduced) <= v]
    return isas[-1] if isas else None


def ptx_driver_problem(isa, driver):
    """(reason, fix) when driver ``driver`` cannot load PTX of ISA ``isa`` (the driver JIT-assembles the PTX
    numba hands it: CUDA_ERROR_UNSUPPORTED_PTX_VERSION at the first launch); None when it can or either is
    unknown."""
    cuda = ptx_isa_cuda(isa)
    driver_cuda = driver_max_cuda(driver)
    if cuda is None or driver_cuda is None or parse_version(driver_cuda) >= cuda:
        return None
    need = dict(CUDA_MIN_DRIVER).get(cuda)
    return ('PTX ISA %s (CUDA %s) needs NVIDIA driver >= %s; driver %s loads PTX up to ISA %s (CUDA %s): '
            'CUDA_ERROR_UNSUPPORTED_PTX_VERSION at the first launch' % (
                isa, cuda, need or '?', driver, max_ptx_isa(driver_cuda), driver_cuda),
            'upgrade the driver to >= %s, or give numba a CUDA <= %s toolkit (CUDA_HOME)' % (need or '?', driver_cuda))


# Known failures of a real compile: (name, pattern of the compiler's message, what it means). The judge adds the
# fix from the numba x toolkit row (numba.numba_toolkit_findings) when that row explains it.
CompileFailure = collections.namedtuple('CompileFailure', 'name pattern meaning')

COMPILE_FAILURES = (
    # measured: numba 0.48 + CUDA 11.8 / 12.9 / 13.0 libNVVM (numba#6607: typed-pointer IR of numba <= 0.52)
    CompileFailure('nvvm-ir-syntax', r"parse expected comma after \w+'s type",
                   "numba <= 0.52 emits NVVM IR that the libNVVM of CUDA >= 11.2 cannot parse (numba#6607)"),
    # measured: numba 0.56.4 + CUDA 12.9 libNVVM (numba#8715)
    CompileFailure('nvvm-ir-version', r'IR version [\d.]+ incompatible with current version',
                   "numba 0.53-0.56 emit NVVM IR 1.6, CUDA 12's libNVVM reads IR 2.0 only (numba#8715)"),
    # measured: numba 0.56.4 with CUDA_HOME at the nvidia-cuda-nvcc wheel alone (no libcudart), and numba
    # 0.56.4 and 0.68.1 with CUDA 11.8's runtime on a machine without a driver (cudaRuntimeGetVersion:
    # cudaErrorUnknown; the 12.9 and 13.0 runtimes answer without one)
    CompileFailure('no-runtime-ccs', r'No supported GPU compute capabilities found',
                   "numba takes the GPUs it may compile for from the CUDA runtime's version (libcudart in "
                   "CUDA_HOME/lib64, else the system loader's); none was read: no libcudart, or CUDA 11.x's, "
                   "which answers only with a driver"),
    # measured: numba 0.68.1 (numpy 2.4) compiling mmdet3d 1.4's kernel: min() of two scalars in a kernel is
    # typed through an overload whose *args implementation numba's CUDA target compiles with 2 argument types
    # (OpenPCDet PR #1773 reports the same message); numba 0.60.0 compiles mmdet3d 1.0.0rc6's kernel
    CompileFailure('minmax-signature', r'Signature mismatch: \d+ argument types given',
                   "this numba's built-in CUDA target cannot compile min()/max() of scalars inside a kernel "
                   "(OpenPCDet PR #1773)"),
    # measured: CUDA 12.9's ptxas on CUDA 13.0's PTX
    CompileFailure('ptx-too-new', r'Unsupported \.version',
                   'the PTX is newer than this ptxas (or driver) reads'),
    CompileFailure('libnvvm-missing', r'libNVVM cannot be found',
                   'numba finds no libNVVM (numba <= 0.56 look for nvvm/lib64 under CUDA_HOME, conda or '
                   '/usr/local/cuda; mmdet3d#2507)'),
    CompileFailure('arch-unsupported', r'(unsupported option|[Uu]nsupported gpu architecture|not defined for '
                                       r'option)',
                   'this toolkit cannot compile for that architecture'),
    CompileFailure('needs-driver', r'Error at driver init|CUDA driver library cannot be found',
                   'this numba asks the CUDA driver while compiling'),
)


def compile_failure(message):
    """The COMPILE_FAILURES row whose pattern the compiler's ``message`` matches, else None."""
    for failure in COMPILE_FAILURES:
        if re.search(failure.pattern, message or ''):
            return failure
    return None
