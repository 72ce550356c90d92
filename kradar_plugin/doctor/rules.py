"""Rules: pure functions of a facts dict -> (status, reason, fix) Findings. No probing, no imports.

Each rule returns a list of Findings; an empty list means the check passed (the check supplies the OK line)
and a single SKIP Finding means it does not apply here, with the reason. Version facts and their boundaries
live in kradar_plugin.compat.facts (shared with the rotated-IoU guard); this module only applies them.
"""
from ..compat import facts as F
from ..compat.versions import major_minor, mmdet3d_box_convention, parse_version

Finding = F.Finding


def _skip(reason):
    return [Finding('SKIP', reason, '')]


def has_gpu(facts):
    return bool(facts.get('gpus')) or bool(facts.get('gpu-cc'))


def _uses_cuda(facts):
    """Whether numba's CUDA target will be exercised: a GPU here, or a planned (assumed) CUDA/driver."""
    assumed = facts.get('assumed', ())
    return has_gpu(facts) or 'cuda' in assumed or 'driver' in assumed


def numba_python(facts):
    if not facts.get('numba'):
        return _skip('numba not installed (the rotated IoU uses its numpy backend)')
    return F.numba_python_findings(facts['numba'], facts.get('python'))


def numba_numpy(facts):
    if not facts.get('numba'):
        return _skip('numba not installed')
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
        findings = [Finding('FAIL', 'import numba fails: %s' % error,
                            "pip install --force-reinstall 'numba==%s'" % facts['numba'])]
    return findings


def numba_cuda(facts):
    if not facts.get('numba'):
        return _skip('numba not installed')
    if not _uses_cuda(facts):
        return _skip('no GPU: numba.cuda is not used (the rotated IoU runs on its CPU backends)')
    if not facts.get('cuda'):
        return _skip('no CUDA toolkit found (see libnvvm)')
    return F.numba_toolkit_findings(facts['numba'], facts['cuda'])


def numba_driver(facts):
    if not facts.get('driver'):
        return _skip('no NVIDIA driver')
    if not facts.get('numba'):
        return _skip('numba not installed')
    return F.numba_driver_findings(facts['numba'], facts['driver'], facts.get('cuda'))


def libnvvm(facts):
    if not facts.get('numba'):
        return _skip('numba not installed')
    if not _uses_cuda(facts):
        return _skip('no GPU: libNVVM is not needed')
    if facts.get('libnvvm'):
        return []
    return [Finding('WARN', "numba.cuda cannot find libNVVM (NvvmSupportError; mmdet3d's rotate_iou kernel "
                            "raises it at the first evaluation; kradar_plugin falls back to CPU)",
                    'conda install cudatoolkit (or pip install nvidia-cuda-nvcc-cu12) or set CUDA_HOME to a '
                    'toolkit with nvvm/lib64/libnvvm.so')]


def compile_test(facts):
    result = facts.get('compile-test')
    if result is None:
        return _skip('not run (use --compile-test)')
    status, detail = result
    if status == 'ok':
        return [Finding('OK', 'numba.cuda test kernel: %s' % detail, '')]
    if status == 'skip':
        return _skip(detail)
    return [Finding('FAIL' if has_gpu(facts) else 'WARN', 'compiling a tiny numba.cuda kernel failed: %s'
                    % detail, 'apply the numba-cuda/numba-driver/libnvvm fixes above; then re-run '
                              'kradar-doctor --compile-test')]


def _lite_mmcv(facts):
    """The lite mmcv 1.x (distribution 'mmcv' < 2.0; mmcv 2.x under that name is the full build)."""
    v = parse_version(facts.get('mmcv'))
    return v is not None and v < '2.0'


def _is_2x(version):
    v = parse_version(version)
    return v is not None and v >= '2.0.0rc0'


def _ops_users(facts):
    """Installed packages of the OpenMMLab 2.x generation that need mmcv's compiled ops (mmcv._ext)."""
    return ['%s %s' % (p, facts[p]) for p in ('mmdet', 'mmdet3d', 'mmseg')
            if F.openmmlab_generation(p, facts.get(p)) == 2]


def _mmcv_wheel_hint(version, facts):
    return ('pip install mmcv==%s -f https://download.openmmlab.com/mmcv/dist/%s/torch%s/index.html (or compile '
            'it: MMCV_WITH_OPS=1 pip install mmcv==%s --no-binary mmcv)'
            % (version, _cu_tag(facts.get('torch-cuda')), major_minor(facts.get('torch')) or 'X.Y', version))


def mmcv_full(facts):
    full, mmcv, lite2 = facts.get('mmcv-full'), facts.get('mmcv'), facts.get('mmcv-lite')
    if not full and not mmcv and not lite2:
        return _skip('mmcv not installed')
    installed = ['%s %s' % (n, v) for n, v in (('mmcv', mmcv), ('mmcv-full', full), ('mmcv-lite', lite2)) if v]
    if len(installed) > 1:
        keep = "'mmcv-full==%s'" % full if full else "'mmcv==%s'" % mmcv
        return [Finding('FAIL', '%s %s are installed in one environment (they share the mmcv package: '
                                'ModuleNotFoundError)' % ('both' if len(installed) == 2 else 'all of',
                                                          ' and '.join(installed)),
                        'pip uninstall -y mmcv mmcv-full mmcv-lite && pip install %s' % keep)]
    if _lite_mmcv(facts):
        wanted = 'mmcv-full'
        return [Finding('FAIL', "mmcv %s (lite, no compiled ops) is installed instead of mmcv-full: No module "
                                "named 'mmcv._ext'" % facts['mmcv'],
                        'pip uninstall -y mmcv && mim install %s (or pip install %s -f '
                        'https://download.openmmlab.com/mmcv/dist/<cuXXX>/<torchX.Y.0>/index.html)'
                        % (wanted, wanted))]
    if lite2:
        users = _ops_users(facts)
        if not users:
            return [Finding('OK', 'mmcv-lite %s (no compiled ops); nothing installed here needs mmcv.ops' % lite2,
                            '')]
        return [Finding('FAIL', "mmcv-lite %s has no compiled ops (No module named 'mmcv._ext'): %s models, "
                                "datasets and evaluation fail to import" % (lite2, ', '.join(users)),
                        'pip uninstall -y mmcv-lite && ' + _mmcv_wheel_hint(lite2, facts))]
    name, version = ('mmcv-full', full) if full else ('mmcv', mmcv)
    ext = facts.get('mmcv-ext')
    if ext and ext != 'ok':
        hint = ' (compiled against another torch)' if 'undefined symbol' in ext else ''
        return [Finding('FAIL', 'import mmcv._ext fails%s: %s' % (hint, ext),
                        'reinstall %s built for this torch %s / CUDA %s: pip install %s==%s -f '
                        'https://download.openmmlab.com/mmcv/dist/%s/torch%s.0/index.html'
                        % (name, facts.get('torch'), facts.get('torch-cuda'), name, version,
                           _cu_tag(facts.get('torch-cuda')), major_minor(facts.get('torch')) or 'X.Y'))]
    if facts.get('mmcv-ext-file') is False:
        return [Finding('FAIL', "%s %s is installed but mmcv/_ext*.so is missing (built without ops?): No module "
                                "named 'mmcv._ext'" % (name, version),
                        "pip install --force-reinstall --no-cache-dir '%s==%s'%s"
                        % (name, version, ' (MMCV_WITH_OPS=1 when compiling)' if name == 'mmcv' else ''))]
    return []


def _cu_tag(cuda):
    if not cuda or cuda == 'cpu':
        return 'cpu'
    v = parse_version(cuda)
    return 'cu%d%d' % (v.part(0), v.part(1)) if v is not None else 'cuXXX'


def _mmcv_version(facts):
    """The mmcv the OpenMMLab asserts see (mmcv.__version__): mmcv-full 1.x, mmcv 2.x, lite mmcv or mmcv-lite."""
    return facts.get('mmcv-full') or facts.get('mmcv') or facts.get('mmcv-lite')


def openmmlab_ranges(facts):
    """mmcv (and mmdet/mmseg/mmengine) within what the installed mmdet/mmdet3d/mmseg assert at import."""
    findings, judged = [], []
    assumed = facts.get('assumed', ())
    installed = facts.get('installed-ranges') or {}
    for package in ('mmdet', 'mmdet3d', 'mmseg'):
        version = facts.get(package)
        if not version:
            continue
        if package not in assumed and package in installed:
            ranges = installed[package]
        else:
            ranges = dict((dep, (lo, hi, inclusive, True))
                          for dep, (lo, hi, inclusive) in F.openmmlab_asserts(package, version).items())
        if not ranges:
            continue
        judged.append('%s %s' % (package, version))
        for dep, (lo, hi, inclusive, enforced) in sorted(ranges.items()):
            if dep in ('mmcv', 'mmcv-full'):
                dep_version = _mmcv_version(facts)
                dep = 'mmcv' if _is_2x(lo) else 'mmcv-full'
            else:
                dep_version = facts.get(dep)
            found = F.range_findings(package, version, dep, dep_version, lo, hi, 'asserts', inclusive)
            if not enforced:
                found = [f._replace(status='WARN', reason=f.reason.replace('asserts', 'recommends'))
                         for f in found]
            findings.extend(found)
    if not judged:
        return _skip('no mmdet/mmdet3d/mmseg with a known mmcv range installed')
    return findings


def openmmlab_mix(facts):
    versions = dict((k, facts.get(k)) for k in ('mmcv-full', 'mmcv', 'mmcv-lite', 'mmdet', 'mmseg', 'mmdet3d'))
    if not any(versions.values()):
        return _skip('no OpenMMLab package installed')
    return F.generation_mix_findings(versions)


def mmdet3d_numpy(facts):
    if not facts.get('mmdet3d'):
        return _skip('mmdet3d not installed')
    numpy = facts.get('numpy-effective')
    if not numpy:
        return _skip('numpy not installed')
    return F.numpy_alias_findings(facts['mmdet3d'], numpy, facts.get('pipeline'))


def mmcv_wheel(facts):
    mmcv = facts.get('mmcv') or facts.get('mmcv-lite')
    if not _is_2x(mmcv) or facts.get('mmcv-lite'):
        return _skip('no mmcv 2.x with compiled ops')
    if not facts.get('torch'):
        return _skip('torch not installed')
    assumed = facts.get('assumed', ())
    if 'mmcv' not in assumed and 'torch' not in assumed:
        ext = facts.get('mmcv-ext')
        if ext == 'ok':
            return [Finding('OK', 'mmcv %s with torch %s: mmcv._ext imports (built for this torch)'
                            % (mmcv, facts['torch']), '')]
        if ext:
            return _skip('mmcv._ext does not import (see mmcv-full)')
        return _skip('mmcv._ext not probed (quick mode)')
    return F.mmcv_wheel_findings(mmcv, facts['torch'])


def mmengine_torch(facts):
    if not facts.get('mmengine'):
        return _skip('mmengine not installed')
    if not facts.get('torch'):
        return _skip('torch not installed')
    return F.mmengine_torch_load_findings(facts['mmengine'], facts['torch'])


# Modules whose "No module named X" names a different distribution.
_DIST_OF_MODULE = {'sklearn': 'scikit-learn', 'skimage': 'scikit-image', 'cv2': 'opencv-python', 'PIL': 'Pillow',
                   'yaml': 'PyYAML', 'nuscenes': 'nuscenes-devkit', 'lyft_dataset_sdk': 'lyft_dataset_sdk',
                   'mmseg': 'mmsegmentation', 'pycocotools': 'pycocotools', 'shapely': 'shapely'}


def _import_fix(module, error, facts):
    if "No module named 'mmcv._ext'" in error or 'mmcv._ext' in error:
        return 'install mmcv with compiled ops (see the mmcv-full check)'
    if 'is used but incompatible' in error:
        return 'install the versions the package asserts (see the mmcv-range check)'
    if "module 'numpy' has no attribute" in error:
        return "pip install 'numpy<1.24' (see the mmdet3d-numpy check)"
    if error.startswith('ModuleNotFoundError') or error.startswith('ImportError: No module named'):
        missing = error.split("'")[1] if "'" in error else ''
        top = missing.split('.')[0]
        if top:
            return 'pip install %s (then re-run kradar-doctor)' % _DIST_OF_MODULE.get(top, top.replace('_', '-'))
    return 'python -c "import %s" shows the full traceback' % module


def imports(facts):
    errors = facts.get('import-errors')
    if errors is None:
        return _skip(facts.get('imports-skipped') or 'not probed')
    findings = []
    for package in sorted(errors):
        module, error = errors[package]
        findings.append(Finding('FAIL', 'import %s fails: %s' % (module, error), _import_fix(module, error, facts)))
    if not findings and facts.get('imports-checked'):
        return [Finding('OK', 'import %s: ok' % ', '.join(facts['imports-checked']), '')]
    return findings


def box_convention(facts):
    info = facts.get('checkpoint') or {}
    ckpt = facts.get('checkpoint-mmdet3d')
    if not info and not ckpt:
        return _skip('no --checkpoint given')
    if info.get('error') and not ckpt:
        return _skip('cannot read the checkpoint meta: %s' % info['error'])
    inferred = None
    if not ckpt and info.get('mmengine_version'):
        ckpt = F.MMDET3D_FIRST_MMENGINE
        inferred = ('an mmengine runner (mmengine %s: mmdet3d >= %s)'
                    % (info['mmengine_version'], F.MMDET3D_FIRST_MMENGINE))
    if not ckpt:
        return _skip('the checkpoint meta records no mmdet3d_version (not saved by an mmdet3d tools/train.py)')
    convention = mmdet3d_box_convention(ckpt)
    installed = facts.get('mmdet3d')
    if not installed:
        return _skip("mmdet3d not installed; the checkpoint (%s) uses '%s' boxes: evaluate with "
                     "box_convention='%s'" % (inferred or 'mmdet3d %s' % ckpt, convention, convention))
    findings = F.box_convention_findings(ckpt, installed, inferred)
    if findings:
        return findings
    return [Finding('OK', "checkpoint (%s) and installed mmdet3d %s share the '%s' box convention"
                    % (inferred or 'mmdet3d %s' % ckpt, installed, convention), '')]


def yapf(facts):
    if not facts.get('yapf'):
        return _skip('yapf not installed')
    return F.yapf_findings(facts['yapf'], {'mmcv-full': facts.get('mmcv-full'), 'mmcv': facts.get('mmcv'),
                                           'mmengine': facts.get('mmengine')})


def numpy_base(facts):
    numpy, base, runtime = facts.get('numpy'), facts.get('numpy-base'), facts.get('numpy-runtime')
    if base and numpy and parse_version(base) != parse_version(numpy):
        return [Finding('FAIL', 'conda has numpy %s but numpy-base %s: numpy %s is what imports (conda#7481)'
                        % (numpy, base, base),
                        'conda install numpy=%s numpy-base=%s' % (numpy, numpy))]
    if runtime and (base or numpy) and parse_version(runtime) != parse_version(base or numpy):
        return [Finding('WARN', 'numpy %s imports but the package manager records numpy %s (a second copy from '
                                'pip/conda, numpy#9670)' % (runtime, base or numpy),
                        'pip uninstall -y numpy (repeat until none is left), then install one numpy==%s'
                        % (base or numpy))]
    if not base and not facts.get('conda'):
        return _skip('not a conda environment (numpy %s)' % (runtime or numpy))
    return []


def _cc_supported(cc, arch_list):
    """Whether torch kernels for arch_list run on compute capability cc ('8.6')."""
    v = parse_version(cc)
    major, minor = v.part(0), v.part(1)
    for arch in arch_list:
        kind, _, digits = arch.partition('_')
        if not digits.isdigit():
            continue
        a_major, a_minor = int(digits[:-1]), int(digits[-1])
        if kind == 'sm' and a_major == major and a_minor <= minor:
            return True  # cubins run on later minors of the same major
        if kind == 'compute' and (a_major, a_minor) <= (major, minor):
            return True  # PTX is JIT-compiled forward
    return False


def torch_gpu(facts):
    if not facts.get('torch'):
        return _skip('torch not installed')
    if not has_gpu(facts):
        return _skip('no GPU: torch runs on CPU')
    torch_cuda = facts.get('torch-cuda')
    if torch_cuda == 'cpu':
        return [Finding('WARN', 'torch %s is a CPU-only build on a machine with %s GPU(s)'
                        % (facts['torch'], facts.get('gpus')),
                        'pip install torch==%s -f https://download.pytorch.org/whl/torch_stable.html (a +cuXXX '
                        'build)' % parse_version(facts['torch']).public)]
    findings = []
    for cc in facts.get('gpu-cc') or ():
        arch = facts.get('torch-arch')
        if arch:
            ok = _cc_supported(cc, arch)
            have = ' '.join(arch)
        else:
            max_cc = F.torch_cuda_max_cc(torch_cuda)
            ok = max_cc is None or parse_version(cc) <= max_cc
            have = 'up to sm_%s' % (max_cc or '?').replace('.', '')
        if not ok:
            findings.append(Finding('FAIL', 'torch %s (CUDA %s) has no kernels for this GPU (compute capability '
                                            '%s; built for %s): "no kernel image is available"'
                                    % (facts['torch'], torch_cuda, cc, have),
                                    'install a torch built for a newer CUDA that supports sm_%s'
                                    % cc.replace('.', '')))
            break
    return findings


def mmcv_torch(facts):
    full = facts.get('mmcv-full') or (facts.get('mmcv') if not _lite_mmcv(facts) else None)
    if not full:
        return _skip('mmcv-full not installed')
    findings = []
    mmcv_torch_v, torch_v = facts.get('mmcv-torch'), facts.get('torch')
    if mmcv_torch_v and torch_v and major_minor(mmcv_torch_v) != major_minor(torch_v):
        findings.append(Finding('FAIL', 'mmcv-full %s was compiled for torch %s but torch %s is installed '
                                        '(undefined symbol in mmcv._ext)' % (full, mmcv_torch_v, torch_v),
                                'pip install mmcv-full==%s -f https://download.openmmlab.com/mmcv/dist/%s/'
                                'torch%s.0/index.html' % (full, _cu_tag(facts.get('torch-cuda')),
                                                          major_minor(torch_v))))
    mmcv_cuda, torch_cuda = facts.get('mmcv-cuda'), facts.get('torch-cuda')
    if mmcv_cuda and torch_cuda and torch_cuda != 'cpu':
        if mmcv_cuda == 'not available':
            if has_gpu(facts):
                findings.append(Finding('WARN', 'mmcv-full %s was compiled without CUDA: mmcv.ops on GPU tensors '
                                                'fail' % full,
                                        'MMCV_WITH_OPS=1 FORCE_CUDA=1 pip install mmcv-full==%s --no-binary '
                                        'mmcv-full' % full))
        elif parse_version(mmcv_cuda) is not None and \
                parse_version(mmcv_cuda).part(0) != parse_version(torch_cuda).part(0):
            findings.append(Finding('FAIL', 'mmcv-full %s was compiled with CUDA %s but torch uses CUDA %s'
                                    % (full, mmcv_cuda, torch_cuda),
                                    'pip install mmcv-full==%s -f https://download.openmmlab.com/mmcv/dist/%s/'
                                    'torch%s.0/index.html' % (full, _cu_tag(torch_cuda), major_minor(torch_v))))
    return findings


def _mib(n):
    return '%d MiB' % (n // 2 ** 20)


def shm(facts):
    size = facts.get('shm')
    if size is None:
        return _skip('no /dev/shm here')
    workers = facts.get('workers-per-gpu')
    if workers is None:
        if size < F.SHM_NO_CONFIG_MIN:
            return [Finding('WARN', '/dev/shm is only %s (Docker default 64 MiB); DataLoader workers die with '
                                    'SIGBUS (exit -7) at the train->val switch' % _mib(size),
                            'docker run --ipc=host (or --shm-size=8g); check a config with --config')]
        return []
    gpus = facts.get('gpus-for-run') or facts.get('gpus') or 1
    total = workers * gpus
    if total == 0:
        return []
    what = '%d workers_per_gpu x %d GPU(s) = %d workers' % (workers, gpus, total)
    if size < total * F.SHM_PER_WORKER_MIN:
        return [Finding('FAIL', '/dev/shm is %s, too small for %s (>= %s needed): bus error / DataLoader '
                                'worker killed by signal 7' % (_mib(size), what, _mib(total * F.SHM_PER_WORKER_MIN)),
                        'docker run --ipc=host or --shm-size=%dg (or lower data.workers_per_gpu)'
                        % max(1, -(-total * F.SHM_PER_WORKER_OK // 2 ** 30)))]
    if size < total * F.SHM_PER_WORKER_OK:
        return [Finding('WARN', '/dev/shm is %s for %s (%s recommended)'
                        % (_mib(size), what, _mib(total * F.SHM_PER_WORKER_OK)),
                        'docker run --ipc=host or --shm-size=%dg' % max(1, -(-total * F.SHM_PER_WORKER_OK // 2 ** 30)))]
    return []


def sharing_strategy(facts):
    strategy = facts.get('sharing-strategy')
    findings = []
    if strategy == 'file_system':
        findings.append(Finding('WARN', "sharing strategy 'file_system' is prone to shared-memory leaks and starts "
                                        "torch_shm_manager daemons that outlive the run",
                                "use the default 'file_descriptor' (remove set_sharing_strategy('file_system')) "
                                "and raise the fd limit: ulimit -n 65536"))
    elif strategy in (None, 'file_descriptor'):
        nofile = facts.get('nofile')
        if nofile is not None and nofile < F.NOFILE_MIN:
            findings.append(Finding('WARN', "ulimit -n is %d: 'file_descriptor' sharing needs one fd per shared "
                                            "tensor (\"received 0 items of ancdata\" / Too many open files)" % nofile,
                                    'ulimit -n 65536 before launching (not set_sharing_strategy(\'file_system\'))'))
    managers = facts.get('shm-managers') or 0
    if managers:
        findings.append(Finding('WARN', '%d torch_shm_manager process(es) running (leaked by earlier runs with '
                                        "'file_system' sharing?)" % managers,
                                'pgrep -a torch_shm_manager; kill the ones of finished runs'))
    return findings


def local_rank(facts):
    script = facts.get('script-facts')
    if not script:
        return _skip('no --train-script given')
    torch_v = parse_version(facts.get('torch'))
    if torch_v is None:
        return _skip('torch not installed')
    declares = set(script['declares'])
    passed = '--local-rank' if torch_v >= F.TORCH_LOCAL_RANK_DASH else '--local_rank'
    if passed in declares or script['known-args']:
        return []
    name = script['script']
    if declares:
        return [Finding('FAIL', "%s declares only %s but torch %s's torch.distributed.launch passes %s=N: "
                                "\"unrecognized arguments\" (exit code 2)"
                        % (name, '/'.join(sorted(declares)), facts['torch'], passed),
                        "in %s: parser.add_argument('--local_rank', '--local-rank', type=int, default=0) "
                        "(or launch with torchrun)" % name)]
    if script['reads-env']:
        return [Finding('WARN', '%s reads LOCAL_RANK but declares no %s: works with torchrun only, not with '
                                'python -m torch.distributed.launch' % (name, passed),
                        "launch with torchrun, or add parser.add_argument('--local_rank', '--local-rank', "
                        "type=int, default=0)")]
    return [Finding('WARN', '%s neither declares %s nor reads LOCAL_RANK' % (name, passed),
                    "add parser.add_argument('--local_rank', '--local-rank', type=int, default=0) and pass it "
                    "to init_dist, or read os.environ['LOCAL_RANK']")]


def dist_timeout(facts):
    invalid = facts.get('dist-timeout-invalid')
    if invalid:
        return [Finding('FAIL', 'dist_params timeout=%s is neither seconds nor a timedelta '
                                '(init_process_group raises)' % invalid,
                        'dist_params = dict(backend=\'nccl\', timeout=5400)  # seconds')]
    timeout = facts.get('dist-timeout')
    eval_minutes = facts.get('eval-minutes')
    if timeout is None and eval_minutes is None:
        if facts.get('config'):
            return [] if not facts.get('evaluation') else \
                _skip('default %d min timeout; give --assume eval-minutes=N to compare a long evaluation'
                      % (F.DEFAULT_PG_TIMEOUT_S // 60))
        return _skip('no --config (default process-group timeout %d min)' % (F.DEFAULT_PG_TIMEOUT_S // 60))
    timeout = F.DEFAULT_PG_TIMEOUT_S if timeout is None else timeout
    if eval_minutes is None:
        return []
    eval_s = eval_minutes * 60.0
    fix = "dist_params = dict(backend='nccl', timeout=%d)  # seconds, > evaluation time" % int(max(2 * eval_s, 3600))
    if eval_s >= timeout:
        return [Finding('FAIL', 'evaluation (%g min, rank 0 only) outlasts the process-group timeout (%g min): '
                                'the other ranks hit "Watchdog caught collective operation timeout"'
                        % (eval_minutes, timeout / 60.0), fix)]
    if eval_s >= 0.8 * timeout:
        return [Finding('WARN', 'evaluation (%g min) is close to the process-group timeout (%g min)'
                        % (eval_minutes, timeout / 60.0), fix)]
    return []


def probe_errors(facts):
    error = facts.get('probe-error')
    if error:
        return [Finding('WARN', 'probing the frameworks in a subprocess failed: %s' % error,
                        'run python -c "import torch, mmcv._ext" to see the full error')]
    return []


# ---------------------------------------------------------------- distributed pitfalls (issue 11)
# Judged on the real loaders by loader_probe (--config, not --quick) and in the eval-only preflight; the
# judgments live in pitfalls.py (pure), these rules pick them from the facts or apply them to facts.
def _pitfall_skip(name, facts):
    if facts.get('loader-probe-error'):
        if name == 'sampler':
            return [Finding('WARN', 'the loaders were not checked: %s' % facts['loader-probe-error'],
                            'make data.train/data.val build (python -m kradar_plugin.doctor.loader_probe shows '
                            'the whole error), then re-run')]
        return _skip('the loaders could not be built (see sampler)')
    if not facts.get('config'):
        return _skip('needs --config')
    if facts.get('loader-probe-skipped'):
        return _skip(facts['loader-probe-skipped'])
    if name == 'unused-params':
        return _skip('opt-in: --probe-model (one CPU forward/backward on one training batch)')
    return _skip('not probed')


def pitfall(name):
    """The rule of check ``name``: the findings the loader probe made for it."""
    def rule(facts):
        found = [Finding(d['status'], d['reason'], d.get('fix', '')) for d in facts.get('pitfalls') or ()
                 if d.get('name') == name]
        return found or _pitfall_skip(name, facts)
    rule.__name__ = 'pitfall_' + name.replace('-', '_')
    return rule


def ddp_inplace_view(facts):
    from .pitfalls import judge_ddp_view
    r = judge_ddp_view(facts.get('torch'), facts.get('find-unused-parameters'), False, True)
    return [Finding(r.status, r.reason, r.fix)]


def shm_batch(facts):
    demands = facts.get('loader-demands')
    if not demands:
        return _pitfall_skip('shm-batch', facts)
    from .pitfalls import judge_shm_batch
    total = facts.get('shm')
    free = facts.get('shm-free') if 'shm' not in facts.get('assumed', ()) else total
    r = judge_shm_batch(demands, total, free, facts.get('gpus-for-run') or 1)
    return [Finding(r.status, r.reason, r.fix)]


def leftovers(facts):
    found = facts.get('leftovers')
    if found is None:
        return _skip('not probed')
    from .pitfalls import judge_leftovers
    r = judge_leftovers(found, include_managers=False)  # sharing-strategy reports the managers
    return [Finding(r.status, r.reason, r.fix)]

