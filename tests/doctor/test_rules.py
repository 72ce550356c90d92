"""Every doctor rule judged on assumed versions (no probing): the failing case, and the passing neighbour."""
import pytest

from kradar_plugin.doctor import environment

from .helpers import by_status, judge, result


def test_no_gpu_means_cuda_checks_skip_not_fail():
    results = judge('numba=0.48.0,numpy=1.19.5,python=3.7.16', machine={'cuda': '11.3', 'libnvvm': None})
    # A toolkit on disk but no GPU and no planned CUDA: numba.cuda will not run, nothing to fail.
    for name in ('numba-cuda', 'numba-driver', 'libnvvm', 'torch-gpu'):
        assert result(results, name).status == 'SKIP', name
    assert by_status(results, 'FAIL') == []


def test_gpu_without_libnvvm_warns():
    results = judge('numba=0.60.0,numpy=1.26.4,python=3.11.7', machine={'gpus': 1, 'libnvvm': None})
    assert result(results, 'libnvvm').status == 'WARN' and 'libNVVM' in result(results, 'libnvvm').reason


def test_driver_580_with_old_numba():
    results = judge('numba=0.60.0,numpy=1.26.4,python=3.11.7,driver=580.65.06,cuda=12.4')
    assert by_status(results, 'FAIL') == ['numba-driver']
    assert "numba>=0.63" in result(results, 'numba-driver').fix


def test_mmcv_instead_of_mmcv_full():
    results = judge('mmcv=1.4.0,mmdet=2.19.0')
    r = result(results, 'mmcv-full')
    assert r.status == 'FAIL' and "No module named 'mmcv._ext'" in r.reason and 'mmcv-full' in r.fix
    assert r.fix.startswith('pip uninstall -y mmcv')


def test_mmcv_and_mmcv_full_both_installed():
    # Assuming only mmcv-full replaces the whole mmcv group: a live lite mmcv does not count.
    assert result(judge('mmcv-full=1.7.2', machine={'mmcv': '1.7.0'}), 'mmcv-full').status == 'OK'
    results = judge('mmcv=1.7.0,mmcv-full=1.7.2')
    assert result(results, 'mmcv-full').status == 'FAIL' and 'both' in result(results, 'mmcv-full').reason


def test_mmcv_ext_import_error_is_reported_verbatim():
    err = 'ImportError: /x/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so: undefined symbol: _ZN2at5sliceE'
    results = judge('mmcv-full=1.4.0,torch=1.10.0+cu113,mmcv-ext=%s' % err.replace(',', ' '))
    r = result(results, 'mmcv-full')
    assert r.status == 'FAIL' and 'undefined symbol' in r.reason and 'another torch' in r.reason
    assert 'cu113/torch1.10.0' in r.fix


def test_mmcv_2_is_the_full_build():
    results = judge('mmcv=2.1.0')
    assert result(results, 'mmcv-full').status == 'OK'


@pytest.mark.parametrize('assume, failing, also', [
    ('mmcv-full=1.6.0,mmdet3d=0.17.3,mmdet=2.24.0,mmseg=0.20.0', 'mmdet3d', []),   # 1.6.0 > 1.5.0
    ('mmcv-full=1.3.16,mmdet=2.20.0', 'mmdet', []),                                # 1.3.16 < 1.3.17
    ('mmcv-full=1.3.7,mmdet=2.19.0', 'mmdet', []),                                 # 1.3.7 < 1.3.8
    # mmseg 1.1.0 > 1.0.0; and mmseg 1.x is the mmengine generation next to 1.x packages.
    ('mmcv-full=1.5.0,mmdet3d=0.17.3,mmdet=2.19.0,mmseg=1.1.0', 'mmdet3d', ['openmmlab-mix']),
])
def test_openmmlab_asserted_ranges(assume, failing, also):
    results = judge(assume)
    fails = [r for r in results if r.status == 'FAIL']
    assert [r.name for r in fails] == ['mmcv-range'] + also and fails[0].reason.startswith(failing)


def test_installed_package_source_wins_over_the_table():
    # An installed mmdet3d whose own __init__ accepts mmcv up to 1.6.0 (a fork): the assert read from the
    # package decides, not the table.
    installed = {'mmdet3d': {'mmcv-full': ('1.3.8', '1.6.0', True, True)}}
    results = judge('mmcv-full=1.6.0', machine={'mmdet3d': '0.17.3', 'installed-ranges': installed})
    assert result(results, 'mmcv-range').status == 'OK'
    relaxed = {'mmdet3d': {'mmcv-full': ('1.3.8', '1.5.0', True, False)}}
    results = judge('mmcv-full=1.6.0', machine={'mmdet3d': '0.17.3', 'installed-ranges': relaxed})
    assert result(results, 'mmcv-range').status == 'WARN'


def test_yapf_rule():
    assert result(judge('yapf=0.40.2,mmcv-full=1.7.1'), 'yapf').status == 'FAIL'
    assert result(judge('yapf=0.40.2,mmcv-full=1.7.2'), 'yapf').status == 'OK'
    assert result(judge('yapf=0.40.1,mmcv-full=1.4.0'), 'yapf').status == 'OK'


def test_pip_numpy_copy_warns():
    results = judge('numpy=1.19.5', machine={'numpy-runtime': None})
    assert result(results, 'numpy-base').status == 'SKIP'
    live = {'numpy': '1.26.4', 'numpy-runtime': '1.24.0'}
    assert result(judge('python=3.11.7', machine=live), 'numpy-base').status == 'WARN'


def test_torch_cuda_build_vs_gpu():
    # torch cu113 wheels stop at sm_86: an H100 (9.0) has no kernels; an A100 (8.0) is fine.
    assert result(judge('torch=1.10.0+cu113,gpu-cc=9.0'), 'torch-gpu').status == 'FAIL'
    assert result(judge('torch=1.10.0+cu113,gpu-cc=8.0'), 'torch-gpu').status == 'OK'
    # The live arch list beats the table: sm_80 cubins run on 8.6; compute_70 PTX JITs forward.
    live = {'torch': '2.0.1', 'torch-cuda': '11.7', 'gpus': 1, 'gpu-cc': ['8.6'],
            'torch-arch': ['sm_70', 'sm_80']}
    assert result(judge('python=3.11.7', machine=live), 'torch-gpu').status == 'OK'
    live['torch-arch'] = ['sm_70', 'sm_75']
    assert result(judge('python=3.11.7', machine=live), 'torch-gpu').status == 'FAIL'
    live['torch-arch'] = ['sm_75', 'compute_75']
    assert result(judge('python=3.11.7', machine=live), 'torch-gpu').status == 'OK'


def test_mmcv_compiled_for_other_torch_or_cuda():
    assert result(judge('torch=2.0.1,mmcv-full=1.7.2,mmcv-torch=1.13.1'), 'mmcv-torch').status == 'FAIL'
    assert result(judge('torch=2.0.1,mmcv-full=1.7.2,mmcv-torch=2.0.0'), 'mmcv-torch').status == 'OK'
    r = result(judge('torch=1.10.0+cu113,mmcv-full=1.4.0,mmcv-cuda=10.2'), 'mmcv-torch')
    assert r.status == 'FAIL' and 'cu113/torch1.10.0' in r.fix
    # A CPU-only mmcv-full is fine without a GPU (our CI stack), a warning with one.
    cpu = 'torch=2.0.1+cu117,mmcv-full=1.7.2,mmcv-cuda=not available'
    assert result(judge(cpu), 'mmcv-torch').status == 'OK'
    assert result(judge(cpu + ',gpu-cc=8.6'), 'mmcv-torch').status == 'WARN'


@pytest.mark.parametrize('shm, workers, gpus, status', [
    ('64M', 2, 1, 'FAIL'),      # Docker default vs 2 workers: 64 MiB < 2 x 128 MiB floor
    ('512M', 4, 2, 'FAIL'),     # 8 workers: 512 MiB < 8 x 128 MiB = 1 GiB
    ('1G', 4, 2, 'WARN'),       # exactly the 1 GiB floor, but < 8 x 512 MiB = 4 GiB recommended
    ('4G', 4, 2, 'OK'),
    ('64M', 0, 8, 'OK'),        # no workers: nothing in /dev/shm
])
def test_shm_vs_workers(shm, workers, gpus, status):
    results = judge('shm=%s,workers-per-gpu=%d' % (shm, workers), **{'gpus-for-run': gpus})
    assert result(results, 'shm').status == status


def test_shm_small_without_config():
    assert result(judge('shm=64M'), 'shm').status == 'WARN'
    assert result(judge('shm=8G'), 'shm').status == 'OK'


def test_sharing_strategy():
    assert result(judge('sharing-strategy=file_system'), 'sharing-strategy').status == 'WARN'
    assert result(judge('sharing-strategy=file_descriptor,nofile=1024'), 'sharing-strategy').status == 'WARN'
    assert result(judge('sharing-strategy=file_descriptor,nofile=65536'), 'sharing-strategy').status == 'OK'
    r = result(judge('nofile=65536', machine={'shm-managers': 3}), 'sharing-strategy')
    assert r.status == 'WARN' and '3 torch_shm_manager' in r.reason


@pytest.mark.parametrize('eval_minutes, timeout, status', [
    (45, None, 'FAIL'),        # default 30 min process-group timeout
    (25, None, 'WARN'),        # > 80 % of 30 min
    (10, None, 'OK'),
    (45, 5400, 'OK'),          # dist_params timeout=5400 s (90 min)
])
def test_dist_timeout_vs_long_eval(eval_minutes, timeout, status):
    assume = 'eval-minutes=%d' % eval_minutes + (',dist-timeout=%d' % timeout if timeout else '')
    assert result(judge(assume), 'dist-timeout').status == status


def test_parse_assume_errors_name_the_item():
    with pytest.raises(ValueError, match="unknown key 'numbaa'"):
        environment.parse_assume('numbaa=0.48.0')
    with pytest.raises(ValueError, match="'numba' needs a value"):
        environment.parse_assume('numba')
    with pytest.raises(ValueError, match='numba=.*not a version'):
        environment.parse_assume('numba=latest')
    with pytest.raises(ValueError, match='cannot read size'):
        environment.parse_assume('shm=lots')
    assert environment.parse_assume('mmcv_full=1.4.0,numpy_base=1.20.3,shm=64M') == {
        'mmcv-full': '1.4.0', 'numpy-base': '1.20.3', 'shm': 64 * 2 ** 20}


# The lead's 1.x stack (issue 8): mmcv-full 1.7.0 + mmdet 2.28.2 + mmseg 0.30.0 + mmdet3d 1.0.0rc6 +
# numpy 1.23.5 + numba 0.60 + torch 2.0.1 on Python 3.11. By hand: mmdet 2.28 asserts mmcv 1.3.17..1.8.0;
# mmdet3d rc6 asserts mmcv 1.5.2..1.7.0, mmdet 2.24.0..3.0.0, mmseg 0.20.0..1.0.0; numba 0.60 takes numpy
# 1.22..2.0 and Python 3.9..3.12; numpy 1.23.5 < 1.24 keeps np.bool; all packages are 1.x; yapf 0.40.1.
NEW_STACK = ('python=3.11.7,torch=2.0.1,mmcv-full=1.7.0,mmdet=2.28.2,mmseg=0.30.0,mmdet3d=1.0.0rc6,'
             'numpy=1.23.5,numba=0.60.0,yapf=0.40.1')


def test_new_legacy_stack_is_clean():
    results = judge(NEW_STACK)
    assert by_status(results, 'FAIL') == [] and by_status(results, 'WARN') == []
    for name in ('mmcv-full', 'mmcv-range', 'openmmlab-mix', 'mmdet3d-numpy', 'numba-numpy', 'yapf'):
        assert result(results, name).status == 'OK', name


def test_new_stack_with_mmcv_full_172_fails_the_range():
    results = judge(NEW_STACK.replace('mmcv-full=1.7.0', 'mmcv-full=1.7.2'))
    assert by_status(results, 'FAIL') == ['mmcv-range']
    r = result(results, 'mmcv-range')
    assert r.reason.startswith('mmdet3d 1.0.0rc6 asserts mmcv-full>=1.5.2,<=1.7.0 but 1.7.2')
    assert "'mmcv-full>=1.5.2,<=1.7.0'" in r.fix


def test_new_stack_with_numpy_124_fails():
    results = judge(NEW_STACK.replace('numpy=1.23.5', 'numpy=1.24.4'))
    assert by_status(results, 'FAIL') == ['mmdet3d-numpy']
    assert 'np.bool' in result(results, 'mmdet3d-numpy').reason
    assert "numpy==1.23.5" in result(results, 'mmdet3d-numpy').fix


def test_mmdet3d_1x_np_long_needs_the_pipeline_to_decide():
    stack = 'mmdet3d=1.4.0,numpy=1.26.4'
    assert result(judge(stack), 'mmdet3d-numpy').status == 'WARN'
    assert result(judge(stack + ',pipeline=LoadPointsFromFile/ObjectSample'), 'mmdet3d-numpy').status == 'FAIL'
    assert result(judge(stack + ',pipeline=LoadPointsFromFile'), 'mmdet3d-numpy').status == 'OK'


# The issue-9 stack: mmengine 0.10.7, mmcv 2.1.0 (compiled), mmdet 3.3.0, mmdet3d 1.4.0, torch 2.1.2, numpy
# 1.26.4. mmdet 3.3 / mmdet3d 1.4 accept mmcv [2.0.0rc4, 2.2.0) and mmengine >= 0.7.1 / 0.8.0; mmcv 2.1.0 has
# wheels for torch 2.1; torch < 2.6; only the np.long WARN of ObjectSample remains (no --config).
MM2_STACK = 'python=3.11.7,torch=2.1.2,mmengine=0.10.7,mmcv=2.1.0,mmdet=3.3.0,mmdet3d=1.4.0,numpy=1.26.4,numba=0.60.0'


def test_openmmlab2_stack():
    results = judge(MM2_STACK)
    assert by_status(results, 'FAIL') == []
    assert by_status(results, 'WARN') == ['mmdet3d-numpy']
    for name in ('mmcv-full', 'mmcv-range', 'openmmlab-mix', 'mmcv-wheel', 'mmengine-torch'):
        assert result(results, name).status == 'OK', name


def test_mmcv_lite_under_mmdet3():
    results = judge(MM2_STACK.replace('mmcv=2.1.0', 'mmcv-lite=2.1.0'))
    r = result(results, 'mmcv-full')
    assert r.status == 'FAIL' and "mmcv._ext" in r.reason and 'mmdet 3.3.0' in r.reason
    # OpenMMLab's index serves mmcv 2.1.0 for torch 2.1; the build from source is named too
    assert r.fix.startswith('pip uninstall -y mmcv-lite && pip install --force-reinstall --no-deps mmcv==2.1.0 '
                            '-f https://download.openmmlab.com/mmcv/dist/cpu/torch2.1.0/index.html')
    assert 'MMCV_WITH_OPS=1 pip install --no-build-isolation' in r.fix
    # mmcv-lite alone (no mmdet/mmdet3d/mmseg 2.x) needs no ops.
    assert result(judge('mmcv-lite=2.1.0,mmengine=0.10.7'), 'mmcv-full').status == 'OK'
    # mmcv and mmcv-lite together share the mmcv package.
    both = result(judge('mmcv=2.1.0,mmcv-lite=2.1.0'), 'mmcv-full')
    assert both.status == 'FAIL' and 'both mmcv 2.1.0 and mmcv-lite 2.1.0' in both.reason


def test_mmcv_22_refused_by_mmdet33_and_mmdet3d14():
    results = judge(MM2_STACK.replace('mmcv=2.1.0', 'mmcv=2.2.0'))
    fails = [r for r in results if r.status == 'FAIL']
    assert [r.name for r in fails] == ['mmcv-range', 'mmcv-range']
    assert fails[0].reason.startswith('mmdet 3.3.0 asserts mmcv>=2.0.0rc4,<2.2.0 but 2.2.0')
    assert fails[1].reason.startswith('mmdet3d 1.4.0 asserts mmcv>=2.0.0rc4,<2.2.0 but 2.2.0')


def test_mmcv21_wheels_vs_newer_torch():
    r = result(judge(MM2_STACK.replace('torch=2.1.2', 'torch=2.3.1')), 'mmcv-wheel')
    assert r.status == 'WARN' and 'torch <= 2.1' in r.reason
    # Installed (not assumed) and mmcv._ext imports: it was built for this torch, nothing to warn about.
    live = {'mmcv': '2.1.0', 'torch': '2.3.1', 'mmcv-ext': 'ok'}
    assert result(judge('python=3.11.7', machine=live), 'mmcv-wheel').status == 'OK'
    live['mmcv-ext'] = 'ImportError: undefined symbol: _ZN3c10'
    assert result(judge('python=3.11.7', machine=live), 'mmcv-wheel').status == 'SKIP'


def test_mmengine_with_torch_26():
    r = result(judge(MM2_STACK.replace('torch=2.1.2', 'torch=2.6.0')), 'mmengine-torch')
    assert r.status == 'FAIL' and 'kradar_plugin.loading.load_checkpoint' in r.fix
    assert 'TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD' not in r.fix      # it runs any code a checkpoint holds


def test_yapf_with_old_mmengine():
    assert result(judge('yapf=0.40.2,mmengine=0.8.4'), 'yapf').status == 'FAIL'
    assert result(judge('yapf=0.40.2,mmengine=0.8.5'), 'yapf').status == 'OK'


@pytest.mark.parametrize('assume, first, second', [
    ('mmcv-full=1.7.0,mmdet=3.3.0,mmengine=0.10.7', 'mmcv-full 1.7.0', 'mmdet 3.3.0'),
    ('mmcv=2.1.0,mmdet=2.28.2', 'mmdet 2.28.2', 'mmcv 2.1.0'),
    ('mmcv-full=1.7.0,mmdet=2.28.2,mmdet3d=1.4.0', 'mmcv-full 1.7.0, mmdet 2.28.2', 'mmdet3d 1.4.0'),
])
def test_mixing_openmmlab_generations(assume, first, second):
    r = result(judge(assume), 'openmmlab-mix')
    assert r.status == 'FAIL' and '1.x (%s)' % first in r.reason and '2.x (%s)' % second in r.reason


def test_import_failures_are_reported():
    live = {'mmdet3d': '1.0.0rc6', 'import-errors': {
        'mmdet3d': ('mmdet3d.datasets', "ModuleNotFoundError: No module named 'lyft_dataset_sdk'")},
        'imports-checked': ['mmdet3d', 'mmdet3d.models']}
    r = result(judge(None, machine=live), 'imports')
    assert r.status == 'FAIL' and r.reason == ("import mmdet3d.datasets fails: ModuleNotFoundError: No module named "
                                               "'lyft_dataset_sdk'")
    assert r.fix.startswith('pip install lyft_dataset_sdk')
    live['import-errors'] = {'mmdet': ('mmdet', 'AssertionError: MMCV==1.7.2 is used but incompatible.')}
    assert 'mmcv-range' in result(judge(None, machine=live), 'imports').fix
    live['import-errors'] = {}
    assert result(judge(None, machine=live), 'imports').status == 'OK'
    # Assumed versions are not the installed ones: the live import results do not apply.
    r = result(judge('mmdet3d=1.0.0rc6', machine=dict(live, **{'import-errors': {'mmdet3d': ('mmdet3d', 'x')}})),
               'imports')
    assert r.status == 'SKIP' and 'assumed' in r.reason


def test_box_convention_rule():
    r = result(judge('checkpoint-mmdet3d=0.17.3,mmdet3d=1.0.0rc6'), 'box-convention')
    assert r.status == 'WARN' and 'mmdet3d 0.17.3' in r.reason and 'mmdet3d 1.0.0rc6' in r.reason
    assert "box_convention='mmdet3d<1.0'" in r.fix
    r = result(judge('checkpoint-mmdet3d=1.0.0rc6,mmdet3d=0.17.3'), 'box-convention')
    assert r.status == 'WARN' and "box_convention='mmdet3d>=1.0'" in r.fix
    assert result(judge('checkpoint-mmdet3d=1.0.0rc4,mmdet3d=1.0.0rc6'), 'box-convention').status == 'OK'
    assert result(judge('mmdet3d=1.0.0rc6'), 'box-convention').status == 'SKIP'
    r = result(judge('checkpoint-mmdet3d=0.17.3'), 'box-convention')
    assert r.status == 'SKIP' and "box_convention='mmdet3d<1.0'" in r.reason
    # An mmengine checkpoint records no mmdet3d version: mmengine runners mean mmdet3d >= 1.1.0rc0.
    live = {'checkpoint': {'path': 'x.pth', 'meta': True, 'mmengine_version': '0.10.7'}}
    r = result(judge('mmdet3d=0.17.3', machine=live), 'box-convention')
    assert r.status == 'WARN' and 'mmengine 0.10.7' in r.reason


def test_every_result_is_named_after_its_check():
    """The judges return what they found without a name (Findings, or the version facts' and pitfalls'
    CheckResults); the runner names every result after its check and adds the OK lines and the SKIPs of
    missing needs."""
    from kradar_plugin.doctor import checks
    from kradar_plugin.facts.result import CheckResult

    from .helpers import fact_sheets
    seen = set()
    for facts in fact_sheets():
        for check in checks.CHECKS:
            found = checks.judged(check, facts)
            assert all(type(r) is CheckResult and r.name == check.name for r in found), (check.name, found)
            runners = ('OK', checks.ok_line(check, facts)) if check.shows is not None else None
            seen.update((r.name, r.status) for r in found if (r.status, r.reason) != runners)  # the judges' own
        assert [r for r in checks.evaluate(facts) if r.name not in [c.name for c in checks.CHECKS]] == []
    assert len(seen) >= 50 and len(set(n for n, s in seen if s == 'FAIL')) >= 15


def test_a_missing_need_skips_its_check_in_the_order_of_the_row():
    """The runner, not the judge, answers for a missing need: '<need> not installed', or the row's own reason;
    the first missing need of the row is named."""
    reasons = dict((r.name, r.reason) for r in judge(None) if r.status == 'SKIP')   # nothing installed, no GPU
    assert reasons['numba-numpy'] == reasons['libnvvm'] == 'numba not installed'
    assert reasons['numba-python'] == 'numba not installed (the rotated IoU uses its numpy backend)'
    assert reasons['numba-driver'] == 'no NVIDIA driver'          # the driver comes before numba in the row
    assert reasons['mmcv-full'] == 'mmcv not installed' and reasons['mmcv-torch'] == 'mmcv-full not installed'
    assert reasons['mmcv-wheel'] == 'no mmcv 2.x with compiled ops'
    assert reasons['torch-gpu'] == 'torch not installed' and reasons['mmengine-torch'] == 'mmengine not installed'
    assert reasons['local-rank'] == 'no --train-script given' and reasons['nccl-failfast'] == 'no --config'
    reasons = dict((r.name, r.reason) for r in judge('mmdet3d=0.17.3,mmengine=0.10.7,mmcv=2.1.0'))
    assert reasons['mmdet3d-numpy'] == 'numpy not installed'      # the need is numpy-effective: what imports
    assert reasons['mmengine-torch'] == reasons['mmcv-wheel'] == 'torch not installed'
    assert reasons['mmcv-torch'] != 'mmcv-full not installed'     # mmcv 2.x is the full build


def test_the_runner_names_what_a_judge_found():
    from kradar_plugin.doctor.checks import Check, evaluate
    from kradar_plugin.doctor.report import Finding
    from kradar_plugin.facts.result import CheckResult
    rows = (Check('one', ('numba',), lambda facts: Finding('WARN', 'r', 'f'), ('numba',)),
            Check('many', (), lambda facts: [Finding('FAIL', 'a', 'x'), CheckResult('other', 'WARN', 'b', '')], ()),
            Check('passes', (), lambda facts: None, ('numba', 'torch')),
            Check('quiet', (), lambda facts: [], None))
    assert evaluate({'numba': '0.60.0'}, rows) == [
        ('one', 'WARN', 'r', 'f'), ('many', 'FAIL', 'a', 'x'), ('many', 'WARN', 'b', ''),
        ('passes', 'OK', 'numba 0.60.0: compatible', '')]
    assert evaluate({}, rows)[0] == ('one', 'SKIP', 'numba not installed', '')


# Today's stack as a new user installs it (.venv-latest, docs/development.md): the onedl forks, torch 2.13, numpy
# 2.2, setuptools 84 (no pkg_resources), mmdet3d 1.4.0 (the last release, asserting mmcv<2.2.0 and mmdet<3.4.0).
# Installed (machine facts), as the probes report them: forks named by 'providers'.
LATEST = {'python': '3.11.7', 'torch': '2.13.0+cpu', 'torch-cuda': 'cpu', 'mmengine': '0.10.12', 'mmcv': '2.3.6',
          'mmdet': '3.5.1', 'mmdet3d': '1.4.0', 'numpy': '2.2.6', 'numba': '0.63.1', 'setuptools': '84.2.1',
          'mmcv-ext': 'ok', 'mmcv-ext-file': True, 'yapf': '0.43.0',
          'providers': {'mmengine': 'onedl-mmengine', 'mmcv': 'onedl-mmcv', 'mmdet': 'onedl-mmdetection'},
          'installed-ranges': {'mmdet3d': {'mmcv-full': ('2.0.0rc4', '2.2.0', False, True),
                                           'mmdet': ('3.0.0rc5', '3.4.0', False, True),
                                           'mmengine': ('0.8.0', '1.0.0', False, True)}}}
REPAIRED = {'mmdet3d': {'mmcv-full': ('2.0.0rc4', '2.4.0', False, True), 'mmdet': ('3.0.0rc5', '3.6.0', False, True),
                        'mmengine': ('0.8.0', '1.0.0', False, True)}}


def _no_missing_index(results):
    """No fix line names OpenMMLab's wheel index for torch 2.13 (it has none) or a fork's version there."""
    for r in results:
        assert 'torch2.13' not in r.fix and not ('download.openmmlab.com' in r.fix and 'onedl' in r.fix), r


def test_latest_stack_unrepaired_mmdet3d_gate():
    results = judge(None, machine=LATEST)
    fails = [r for r in results if r.status == 'FAIL']
    assert sorted(r.name for r in fails) == ['mmcv-range', 'mmcv-range'], fails
    r = [f for f in fails if 'mmcv>=2.0.0rc4,<2.2.0' in f.reason][0]
    assert 'onedl-mmcv' in r.reason
    # the documented repair first (mmdet3d 1.4.0 is the last release), then an install that can build under
    # setuptools 84
    assert r.fix.startswith('python -m kradar_plugin.compat.mmdet3d_version_gate'), r.fix
    assert "pip install 'setuptools<82' && MMCV_WITH_OPS=1 pip install --no-build-isolation" in r.fix
    # openmmlab-mix names one generation and leaves the ranges to mmcv-range: the two never contradict
    mix = result(results, 'openmmlab-mix')
    assert mix.status == 'OK' and 'compatible' not in mix.reason and 'mmcv-range' in mix.reason
    assert 'onedl-mmcv' in mix.reason
    _no_missing_index(results)


def test_latest_stack_repaired_gate_passes():
    results = judge(None, machine=dict(LATEST, **{'installed-ranges': REPAIRED}))
    assert by_status(results, 'FAIL') == [], [r for r in results if r.status == 'FAIL']
    assert result(results, 'mmcv-range').status == 'OK'
    assert result(results, 'mmdet3d-numpy').status == 'OK'       # np.long is back in numpy 2; no np.in1d below 2.4
    s = result(results, 'setuptools')
    assert s.status == 'OK' and 'onedl-mmengine 0.10.12' in s.reason
    _no_missing_index(results)


def test_mmcv_built_without_ops_names_the_cause_and_the_build():
    results = judge(None, machine=dict(LATEST, **{'mmcv-ext-file': False, 'installed-ranges': REPAIRED,
                                                  'mmcv-ext': "ModuleNotFoundError: No module named 'mmcv._ext'"}))
    r = result(results, 'mmcv-full')
    assert r.status == 'FAIL' and 'onedl-mmcv 2.3.6' in r.reason and 'Skip building ext ops' in r.reason
    assert r.fix.startswith("MMCV_WITH_OPS=1 pip install --no-build-isolation --no-deps --force-reinstall "
                            "--no-binary onedl-mmcv 'onedl-mmcv==2.3.6'"), r.fix
    _no_missing_index(results)
    # an upstream mmcv <= 2.2 sdist imports pkg_resources: under setuptools >= 82 the build pins it first
    up = result(judge(None, machine={'torch': '2.13.0', 'mmcv': '2.1.0', 'setuptools': '84.2.1',
                                     'mmcv-ext-file': False}), 'mmcv-full')
    assert up.fix.startswith("pip install 'setuptools<82' && MMCV_WITH_OPS=1"), up.fix
    assert 'download.openmmlab.com' not in up.fix      # no mmcv 2.1.0 wheel for torch 2.13 there


def test_setuptools_without_pkg_resources_and_upstream_mmengine():
    r = result(judge('torch=2.13.0', machine={'setuptools': '84.2.1', 'mmengine': '0.10.7'}), 'setuptools')
    assert r.status == 'WARN' and 'pkg_resources' in r.reason and "mmdet::" in r.reason
    assert r.fix.startswith("pip install 'setuptools<82'")
    assert result(judge(None, machine={'setuptools': '80.9.0', 'mmengine': '0.10.7'}), 'setuptools').status == 'OK'


def test_numpy_2_4_removes_in1d_that_mmdet3d_calls():
    r = result(judge(None, machine=dict(LATEST, numpy='2.4.1')), 'mmdet3d-numpy')
    assert r.status == 'WARN' and 'np.in1d' in r.reason and r.fix == "pip install 'numpy<2.4'"


def test_trimesh_2_without_pkg_resources_fails_mmdet3d_runners():
    r = result(judge(None, machine=dict(LATEST, trimesh='2.35.39')), 'setuptools')
    assert r.status == 'FAIL' and 'trimesh 2.35.39' in r.reason and 'mmdet3d 1.4.0' in r.reason
    assert r.fix.startswith("pip install 'trimesh>=3.9.43'")
    ok = result(judge(None, machine=dict(LATEST, trimesh='5.2.0')), 'setuptools')
    assert ok.status == 'OK' and 'trimesh 5.2.0' in ok.reason
    assert result(judge(None, machine=dict(LATEST, trimesh='2.35.39', setuptools='80.9.0')),
                  'setuptools').status == 'OK'


def test_a_generation_mix_on_torch_2_6_or_later_is_sent_to_todays_stack():
    mixed = dict(LATEST, **{'mmcv-full': '1.7.0', 'mmcv': None, 'providers': {}})
    r = result(judge(None, machine=mixed), 'openmmlab-mix')
    assert r.status == 'FAIL' and "'onedl-mmcv==2.3.6'" in r.fix and 'mmdet3d_version_gate' in r.fix
    assert "'mmcv==2.1.0'" not in r.fix             # its sdist cannot build under setuptools >= 82
    old = result(judge(None, machine=dict(mixed, torch='2.1.2')), 'openmmlab-mix')
    assert "'mmcv==2.1.0'" in old.fix
