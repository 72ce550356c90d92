"""Judges of the numba checks: numba against Python, numpy, the CUDA toolkit, the driver and libNVVM, and the
``--compile-test`` outcome. The version boundaries live in kradar_plugin.facts.numba."""
from ... import facts as F
from ...facts.cuda_compile import compile_failure, ptx_driver_problem
from ..report import Finding
from .gpu import has_gpu


def uses_cuda(facts):
    """Whether numba's CUDA target will be exercised: a GPU here, a planned (assumed) CUDA/driver, or GPU nodes
    asked about (``--compile-test``, ``--gpu-arch``)."""
    assumed = facts.get('assumed', ())
    return has_gpu(facts) or 'cuda' in assumed or 'driver' in assumed or bool(facts.get('gpu-arch'))


def numba_python(facts):
    return F.numba_python_findings(facts['numba'], facts.get('python'))


def numba_numpy(facts):
    numpy = facts.get('numpy-effective')
    findings = F.numba_numpy_findings(facts['numba'], numpy)
    if findings and facts.get('numpy-base') and facts.get('numpy') and facts['numpy-base'] != facts['numpy']:
        f = findings[0]  # say which numpy: conda's numpy-base, not the numpy record the user pinned
        findings = [f._replace(reason=f.reason + ' [numpy %s is what imports: conda numpy-base, not the '
                                                  'numpy %s record]' % (numpy, facts['numpy']),
                               fix='conda install numpy=%s numpy-base=%s (conda#7481), then re-check'
                                   % (facts['numpy'], facts['numpy']))]
    error = facts.get('numba-import')
    if not findings and error and error != 'ok':
        return Finding('FAIL', 'import numba fails: %s' % error,
                       "pip install --force-reinstall 'numba==%s'" % facts['numba'])
    return findings


def numba_cuda(facts):
    if not uses_cuda(facts):
        return Finding('SKIP', 'no GPU: numba.cuda is not used (the rotated IoU runs on its CPU backends)')
    if not facts.get('cuda'):
        return Finding('SKIP', 'no CUDA toolkit found (see libnvvm)')
    return F.numba_toolkit_findings(facts['numba'], facts['cuda'])


def numba_driver(facts):
    return F.numba_driver_findings(facts['numba'], facts['driver'], facts.get('cuda'))


def libnvvm(facts):
    if not uses_cuda(facts):
        return Finding('SKIP', 'no GPU: libNVVM is not needed')
    if facts.get('libnvvm'):
        return None
    return Finding('WARN', "numba.cuda cannot find libNVVM (NvvmSupportError; mmdet3d's rotate_iou kernel "
                           "raises it at the first evaluation; kradar_plugin falls back to CPU)",
                   'conda install cudatoolkit (or pip install nvidia-cuda-nvcc-cu12) or set CUDA_HOME to a '
                   'toolkit with nvvm/lib64/libnvvm.so')


def compile_test(facts):
    """``--compile-test``: one line per kernel that compiled (with the toolkit that compiled it), one per
    failure (the compiler's own words, the fact that explains them, its fix), the PTX ISA against the driver."""
    result = facts.get('compile-test')
    if result is None:
        return Finding('SKIP', 'not run (use --compile-test)')
    if isinstance(result, (tuple, list)):
        status, detail = result
        return Finding('SKIP' if status == 'skip' else status.upper(), detail)
    where = toolkit_words(result)
    if not result.get('rows'):
        detail = result.get('detail') or 'nothing to compile'
        return Finding('FAIL', '%s%s' % (detail, where), compile_fix(result, detail, None))
    findings = [f for f in [libnvvm_elsewhere(result.get('toolkit') or {})] if f]
    for kernel, ok, failed in by_kernel(result['rows']):
        if ok:
            isas = sorted(set(r.get('ptx-version') or '?' for r in ok))
            stage = 'SASS' if all(r['stage'] == 'sass' for r in ok) else 'PTX only (no ptxas in the toolkit)'
            findings.append(Finding('OK', '%s: PTX ISA %s -> %s for %s%s' % (
                kernel, '/'.join(isas), stage, ', '.join(r['arch'] for r in ok), where)))
        for error, archs in failed:
            known = compile_failure(error)
            meaning = ' (%s)' % known.meaning if known else ' (no fact in kradar_plugin.facts names this failure)'
            # an architecture the toolkit dropped, compiled only because none was named: a GPU node may not have it
            status = 'WARN' if known and known.name == 'arch-unsupported' and \
                result.get('archs-from') == 'default' else 'FAIL'
            runtime_error = (result.get('toolkit') or {}).get('runtime-error')
            if known and known.name == 'no-runtime-ccs' and runtime_error and not facts.get('driver') and \
                    'cudaError' in runtime_error:
                # the runtime is there but answers only with a driver: a GPU node decides, not this machine
                status, error = 'WARN', '%s (the CUDA runtime without a driver: %s)' % (error, runtime_error)
            findings.append(Finding(status, '%s, %s: %s%s%s' % (kernel, ', '.join(archs) or 'load', error, meaning,
                                                                  where), compile_fix(result, error, kernel)))
    driver = facts.get('driver')
    for isa in sorted(set(r.get('ptx-version') for r in result['rows'] if r['status'] == 'ok' and
                          r.get('ptx-version'))):
        problem = ptx_driver_problem(isa, driver)
        if problem:
            findings.append(Finding('FAIL', problem[0] + where, problem[1]))
    run = result.get('gpu-run')
    if run:
        findings.append(Finding('OK', 'the plugin kernel ran on the GPU and agrees with the numpy backend')
                        if run['status'] == 'ok' else
                        Finding('FAIL', 'the plugin kernel on the GPU: %s' % (
                            run.get('error') or 'max error %g against the numpy backend' % run['max-error']),
                            'KRADAR_IOU_BACKEND=numba (the CPU backend); report this'))
    return findings


def libnvvm_elsewhere(toolkit):
    """WARN when CUDA_HOME has a libNVVM but numba loaded another: numba's search matches only versioned names
    (libnvvm.so.4), NVIDIA's pip wheels ship libnvvm.so, and the system loader then picks any it knows."""
    offered, loaded = toolkit.get('cuda-home-libnvvm'), toolkit.get('libnvvm')
    if not offered or not loaded or toolkit.get('cuda-home-libnvvm-used', True):
        return None
    home = toolkit['cuda-home'].rstrip('/')
    return Finding('WARN', 'CUDA_HOME=%s has %s, but numba loaded %s (its search takes only versioned '
                           'libnvvm.so.X names; the system loader found that one): the compiles below used it'
                   % (home, offered[0].rsplit('/', 1)[-1], loaded),
                   'export LD_LIBRARY_PATH=%s/nvvm/lib64:$LD_LIBRARY_PATH' % home)


def by_kernel(rows):
    """[(kernel, ok rows, [(error, [arch, ...]), ...])] in the rows' order."""
    order, ok, failed = [], {}, {}
    for row in rows:
        kernel = row['kernel']
        if kernel not in ok:
            order.append(kernel)
            ok[kernel], failed[kernel] = [], {}
        if row['status'] == 'ok':
            ok[kernel].append(row)
        else:
            failed[kernel].setdefault(row.get('error') or 'failed', []).extend([row['arch']] if 'arch' in row else [])
    return [(k, ok[k], list(failed[k].items())) for k in order]


def toolkit_words(result):
    """' [numba 0.48.0, CUDA 11.8 at /opt/cuda-11.8, libNVVM .../libnvvm.so]': what compiled, from where."""
    toolkit = result.get('toolkit') or {}
    parts = ['numba %s' % result['numba']] if result.get('numba') else []
    if toolkit.get('root'):
        parts.append('CUDA %s at %s' % (toolkit.get('version') or '(version unknown)', toolkit['root']))
    if toolkit.get('libnvvm'):
        parts.append('libNVVM %s' % toolkit['libnvvm'])
    runtime = toolkit.get('runtime-version')
    if runtime and toolkit.get('version') and runtime != toolkit['version']:
        parts.append('CUDA runtime %s' % runtime)   # numba chooses the GPUs it compiles for by the runtime
    home = toolkit.get('cuda-home')
    if home and toolkit.get('root') and not toolkit['root'].startswith(home.rstrip('/')):
        parts.append('CUDA_HOME=%s is not where that libNVVM came from' % home)
    return ' [%s]' % ', '.join(parts) if parts else ''


def compile_fix(result, error, kernel):
    """The fix for a failed compile: the numba x toolkit fact that explains it, then what works without it."""
    known = compile_failure(error)
    toolkit = (result.get('toolkit') or {})
    version = toolkit.get('version')
    fixes = []
    if known is not None and known.name in ('nvvm-ir-syntax', 'nvvm-ir-version'):
        fixes += [f.fix for f in F.numba_toolkit_findings(result.get('numba'), version) if f.status == 'FAIL']
        if not fixes and known.name == 'nvvm-ir-syntax':
            fixes.append("pip install 'numba>=0.53' (or use a CUDA<=11.1 toolkit for numba)")
        elif not fixes:
            fixes.append("pip install 'numba>=0.57' (or use a CUDA 11.x toolkit for numba)")
    elif known is not None and known.name == 'no-runtime-ccs' and toolkit.get('runtime-error') and \
            'cudaError' in toolkit['runtime-error']:
        fixes.append("run kradar-doctor --compile-test on a GPU node: this CUDA runtime tells its version only "
                     "with a driver")
    elif known is not None and known.name == 'no-runtime-ccs':
        fixes.append("give numba the toolkit's CUDA runtime beside its libNVVM: libcudart.so.* in CUDA_HOME/lib64 "
                     "(a full toolkit, conda install cudatoolkit, or the nvidia-cuda-runtime wheel's lib/)")
    elif known is not None and known.name == 'ptx-too-new':
        fixes.append("use the ptxas of the toolkit whose libNVVM numba loads, and a driver at least that new")
    elif known is not None and known.name == 'libnvvm-missing':
        fixes.append('set CUDA_HOME to a toolkit with nvvm/lib64/libnvvm.so, or conda install cudatoolkit')
    elif known is not None and known.name == 'arch-unsupported':
        fixes.append('this CUDA %s cannot target that GPU: use a toolkit that does, or drop it from --gpu-arch'
                     % (version or ''))
    alternative = fixes and 'or ' or ''
    if kernel and kernel.startswith('mmdet3d'):
        fixes.append(alternative + "import kradar_plugin (custom_imports) so that mmdet3d's rotate_iou runs on the "
                     "plugin's backends")
    elif kernel:
        fixes.append(alternative + "leave the rotated IoU to kradar_plugin's CPU backend (it falls back by itself; "
                     "KRADAR_IOU_BACKEND=numba chooses it)")
    return '; '.join(fixes)
