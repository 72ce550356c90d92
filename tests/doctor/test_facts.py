"""The shared version-facts table (facts/), one test per documented failure mode.

Each expectation is derived from /work/shared/reference/rotate-iou.md ("Failure modes", "Compat matrix") and
environment.md section 3, quoted next to the test.
"""
import pytest

from kradar_plugin import facts as F
from kradar_plugin.facts import numba_cuda_findings
from kradar_plugin.facts.result import CheckResult


def statuses(findings):
    return [f.status for f in findings]


def fails(findings):
    return [f for f in findings if f.status == 'FAIL']


def test_findings_are_the_doctors_one_result_type():
    """The facts' findings are kradar_plugin.facts.result.CheckResult, named after the doctor check that
    reports them (the guard reads status/reason/fix of the same objects)."""
    found = numba_cuda_findings('0.48.0', '1.20.3', '11.3', '580.65.06', '3.9')
    assert all(type(f) is CheckResult for f in found)
    assert found[0]._fields == ('name', 'status', 'reason', 'fix')
    assert [(f.name, f.status) for f in found] == [('numba-python', 'FAIL'), ('numba-numpy', 'FAIL'),
                                                   ('numba-cuda', 'FAIL'), ('numba-driver', 'FAIL')]
    assert all(f.reason and f.fix for f in found)


def test_unknown_numba_gives_nothing():
    assert numba_cuda_findings(None, '1.20.3', '11.3') == [] and numba_cuda_findings('garbage') == []


# Failure mode 1: "numba <=0.52 with CUDA toolkit >=11.2 ... Fix numba>=0.53 ... or CUDA<=11.1".
@pytest.mark.parametrize('numba, cuda, bad', [
    ('0.48.0', '11.3', True), ('0.52.0', '11.2', True), ('0.48.0', '11.1', False), ('0.53.0', '11.2', False),
    ('0.51.2', '11.0', False)])
def test_old_numba_new_nvvm(numba, cuda, bad):
    found = fails(numba_cuda_findings(numba, cuda=cuda))
    assert bool(found) == bad
    if bad:
        assert 'CUDA %s' % cuda in found[0].reason and "numba>=0.53" in found[0].fix
        assert 'NVVM IR 1.6' in found[0].reason


# Failure mode 2: "NvvmError IR version 1.6 incompatible with 2.0: numba 0.53-0.56 with CUDA 12. Fix numba>=0.57".
@pytest.mark.parametrize('numba, cuda, bad', [
    ('0.53.1', '12.0', True), ('0.56.4', '12.1', True), ('0.56.4', '11.8', False), ('0.57.0', '12.1', False)])
def test_ir16_vs_cuda12(numba, cuda, bad):
    found = fails(numba_cuda_findings(numba, numpy='1.21', python='3.9', cuda=cuda))
    assert bool(found) == bad
    if bad:
        assert "numba>=0.57" in found[0].fix


# Failure mode 3: "Min toolkit: 0.48:8.0, 0.53:9.0, 0.54/0.55:9.2, 0.56:10.2, 0.57:11.0, >=0.58:11.2".
@pytest.mark.parametrize('numba, minimum', [('0.48.0', '8.0'), ('0.53.0', '9.0'), ('0.54.1', '9.2'),
                                            ('0.55.2', '9.2'), ('0.56.0', '10.2'), ('0.57.1', '11.0'),
                                            ('0.58.0', '11.2'), ('0.60.0', '11.2')])
def test_minimum_toolkit(numba, minimum):
    major, minor = (int(p) for p in minimum.split('.'))
    below = '%d.%d' % (major, minor - 1) if minor else '%d.0' % (major - 1)
    assert 'toolkit >= %s' % minimum in fails(F.numba_toolkit_findings(numba, below))[0].reason
    assert fails(F.numba_toolkit_findings(numba, minimum)) == []


# Failure mode 8: "Driver >=580 segfaults built-in numba CUDA target (numba#10188); fix numba>=0.63".
def test_driver_580():
    found = fails(F.numba_driver_findings('0.60.0', '580.65.06'))
    assert len(found) == 1 and 'segfault' in found[0].reason and "numba>=0.63" in found[0].fix
    assert fails(F.numba_driver_findings('0.63.0', '580.65.06')) == []
    assert fails(F.numba_driver_findings('0.60.0', '575.51.03')) == []


# Failure mode 5: "LinkerError ptxas Unsupported .version: toolkit newer than driver". CUDA 12.4 needs driver
# >= 550.54.14 (NVIDIA's toolkit/driver table, CUDA_MIN_DRIVER).
def test_toolkit_newer_than_driver():
    found = fails(F.numba_driver_findings('0.60.0', '535.104.05', cuda='12.4'))
    assert len(found) == 1 and 'ptxas' in found[0].reason and '550.54.14' in found[0].fix
    assert fails(F.numba_driver_findings('0.60.0', '535.104.05', cuda='12.2')) == []
    assert F.driver_max_cuda('470.42.01') == '11.4' and F.driver_max_cuda('100') is None


# Failure mode 7: "TypeError expected dtype object ...: numba <=0.50.x wheels with numpy >=1.20 (fixed in 0.51.0)".
@pytest.mark.parametrize('numba, numpy, bad', [('0.48.0', '1.20.3', True), ('0.50.1', '1.20.0', True),
                                               ('0.48.0', '1.19.5', False), ('0.51.0', '1.20.3', False)])
def test_dtype_typeerror(numba, numpy, bad):
    found = fails(F.numba_numpy_findings(numba, numpy))
    assert bool(found) == bad
    if bad:
        assert "expected dtype object, got 'numpy.dtype[float64]'" in found[0].reason


# environment.md: "numba 0.54.0 is the first to refuse newer numpy at import ... 0.55 caps at 1.21 and 0.56 at
# 1.22"; numba 0.53 "checks only the minimum".
@pytest.mark.parametrize('numba, numpy, cap', [('0.54.0', '1.21.0', '1.20'), ('0.55.1', '1.22.0', '1.21'),
                                               ('0.56.0', '1.23.0', '1.22')])
def test_import_caps(numba, numpy, cap):
    found = fails(F.numba_numpy_findings(numba, numpy))
    assert len(found) == 1 and 'Numba needs NumPy %s or less' % cap in found[0].reason
    assert fails(F.numba_numpy_findings(numba, cap + '.5')) == []
    assert fails(F.numba_numpy_findings('0.53.1', '1.22.0')) == []  # 0.53 does not cap


def test_numpy_minimum():
    # Compat matrix: 0.54 needs np>=1.17.
    assert "numpy>=1.17" in fails(F.numba_numpy_findings('0.54.0', '1.16.6'))[0].fix


# Failure mode 9 + matrix "0.60 binary np2.0": numpy >= 2 with numba < 0.60.
def test_numpy2():
    found = fails(F.numba_numpy_findings('0.53.1', '2.0.0'))
    assert len(found) == 1 and 'numpy 1.x' in found[0].reason
    assert fails(F.numba_numpy_findings('0.60.0', '2.0.1')) == []


def test_one_finding_per_numba_numpy_pair():
    # 0.48 + numpy 2: the dtype TypeError is the first and only finding for that pair.
    assert len(F.numba_numpy_findings('0.48.0', '2.0.0')) == 1


@pytest.mark.parametrize('numba, python, ok', [('0.48.0', '3.7.16', True), ('0.48.0', '3.9.1', False),
                                               ('0.60.0', '3.11.7', True), ('0.60.0', '3.8.10', False),
                                               ('0.68.1', '3.11.7', True)])
def test_python_range(numba, python, ok):
    assert (fails(F.numba_python_findings(numba, python)) == []) == ok


def test_current_stacks_have_no_fail():
    # The full test stack (numba 0.60, numpy 1.26.4, Python 3.11) and the light one (0.68.1, numpy 2.4).
    assert fails(numba_cuda_findings('0.60.0', '1.26.4', None, None, '3.11.7')) == []
    assert fails(numba_cuda_findings('0.68.1', '2.4.6', None, None, '3.11.7')) == []


def test_prerelease_uses_its_series():
    assert F.numba_series('0.57.0rc1').first == '0.57.0'
    assert F.numba_series('0.47.0') is None


def test_openmmlab_ranges_follow_the_asserts():
    # environment.md: "mmdet3d/__init__.py in v0.17.3-v1.0.0rc0 accepts mmcv 1.3.8-1.5.0 inclusive";
    # later mmdet 2.x "mmcv_minimum_version='1.3.17', mmcv_maximum_version='1.8.0'", assert uses <=.
    assert F.openmmlab_ranges('mmdet3d', '0.17.3')['mmcv-full'] == ('1.3.8', '1.5.0')
    assert F.openmmlab_ranges('mmdet', '2.28.2')['mmcv-full'] == ('1.3.17', '1.8.0')
    assert F.range_findings('mmdet3d', '0.17.3', 'mmcv-full', '1.5.0', '1.3.8', '1.5.0') == []
    assert statuses(F.range_findings('mmdet3d', '0.17.3', 'mmcv-full', '1.6.0', '1.3.8', '1.5.0')) == ['FAIL']
    assert F.openmmlab_ranges('mmdet', '2.13.0') == {}


# mmdet3d/__init__.py at the git tags (not the faq table): v0.18.0..v1.0.0rc2 assert mmdet>=2.19.0 and
# mmseg>=0.20.0; v1.0.0rc3 raises mmdet to 2.24.0; rc4..rc6 assert 1.5.2 <= mmcv <= 1.7.0.
@pytest.mark.parametrize('mmdet3d, dep, bounds', [
    ('0.17.3', 'mmdet', ('2.14.0', '3.0.0')), ('0.18.0', 'mmdet', ('2.19.0', '3.0.0')),
    ('1.0.0rc0', 'mmseg', ('0.20.0', '1.0.0')), ('1.0.0rc2', 'mmdet', ('2.19.0', '3.0.0')),
    ('1.0.0rc2', 'mmcv-full', ('1.4.8', '1.6.0')), ('1.0.0rc3', 'mmdet', ('2.24.0', '3.0.0')),
    ('1.0.0rc6', 'mmcv-full', ('1.5.2', '1.7.0')),
])
def test_mmdet3d_1x_asserts_from_the_tags(mmdet3d, dep, bounds):
    assert F.openmmlab_asserts('mmdet3d', mmdet3d)[dep] == bounds + (True,)


def test_rc6_refuses_mmcv_full_172_accepts_170():
    lo, hi, inclusive = F.openmmlab_asserts('mmdet3d', '1.0.0rc6')['mmcv-full']
    found = F.range_findings('mmdet3d', '1.0.0rc6', 'mmcv-full', '1.7.2', lo, hi, max_inclusive=inclusive)
    assert statuses(found) == ['FAIL'] and '<=1.7.0' in found[0].reason and 'MMCV==1.7.2' in found[0].reason
    assert F.range_findings('mmdet3d', '1.0.0rc6', 'mmcv-full', '1.7.0', lo, hi, max_inclusive=inclusive) == []


# The 2.x generation asserts ``min <= v < max`` (exclusive maximum): mmdet 3.3.0 wheel
# "mmcv_maximum_version = '2.2.0'" ... "mmcv_version < digit_version(mmcv_maximum_version)"; mmdet3d v1.4.0 the
# same for mmcv, and mmdet < 3.4.0, mmengine >= 0.8.0.
@pytest.mark.parametrize('package, version, dep, bounds', [
    ('mmdet', '3.0.0', 'mmcv', ('2.0.0rc4', '2.1.0', False)),
    ('mmdet', '3.3.0', 'mmcv', ('2.0.0rc4', '2.2.0', False)),
    ('mmdet', '3.3.0', 'mmengine', ('0.7.1', '1.0.0', False)),
    ('mmdet3d', '1.1.0rc0', 'mmcv', ('2.0.0rc0', '2.1.0', False)),
    ('mmdet3d', '1.2.0', 'mmdet', ('3.0.0', '3.2.0', False)),
    ('mmdet3d', '1.4.0', 'mmcv', ('2.0.0rc4', '2.2.0', False)),
    ('mmdet3d', '1.4.0', 'mmdet', ('3.0.0rc5', '3.4.0', False)),
    ('mmdet3d', '1.4.0', 'mmengine', ('0.8.0', '1.0.0', False)),
])
def test_2x_asserts(package, version, dep, bounds):
    assert F.openmmlab_asserts(package, version)[dep] == bounds


def test_exclusive_maximum():
    # mmcv 2.2.0 is refused by mmdet 3.3 (< 2.2.0), 2.1.0 accepted.
    assert statuses(F.range_findings('mmdet', '3.3.0', 'mmcv', '2.2.0', '2.0.0rc4', '2.2.0',
                                     max_inclusive=False)) == ['FAIL']
    assert F.range_findings('mmdet', '3.3.0', 'mmcv', '2.1.0', '2.0.0rc4', '2.2.0', max_inclusive=False) == []
    found = F.range_findings('mmdet', '3.3.0', 'mmcv', '2.2.0', '2.0.0rc4', '2.2.0', max_inclusive=False)
    assert "mmcv>=2.0.0rc4,<2.2.0" in found[0].reason and "'mmcv>=2.0.0rc4,<2.2.0'" in found[0].fix


@pytest.mark.parametrize('package, version, generation', [
    ('mmcv-full', '1.7.2', 1), ('mmcv', '1.7.0', 1), ('mmcv', '2.0.0rc0', 2), ('mmcv', '2.1.0', 2),
    ('mmcv-lite', '2.1.0', 2), ('mmdet', '2.28.2', 1), ('mmdet', '3.0.0rc0', 2), ('mmseg', '0.30.0', 1),
    ('mmseg', '1.0.0rc0', 2), ('mmdet3d', '1.0.0rc6', 1), ('mmdet3d', '1.1.0rc0', 2), ('mmengine', '0.10.7', None),
    ('mmdet', None, None),
])
def test_openmmlab_generation(package, version, generation):
    assert F.openmmlab_generation(package, version) == generation


def test_generation_mix():
    found = F.generation_mix_findings({'mmcv-full': '1.7.0', 'mmdet': '3.3.0', 'mmdet3d': None})
    assert statuses(found) == ['FAIL'] and 'mmcv-full 1.7.0' in found[0].reason and 'mmdet 3.3.0' in found[0].reason
    assert statuses(F.generation_mix_findings({'mmcv': '2.1.0', 'mmdet': '2.28.2'})) == ['FAIL']
    assert F.generation_mix_findings({'mmcv-full': '1.7.0', 'mmdet': '2.28.2', 'mmseg': '0.30.0',
                                      'mmdet3d': '1.0.0rc6'}) == []
    assert F.generation_mix_findings({'mmcv': '2.1.0', 'mmdet': '3.3.0', 'mmdet3d': '1.4.0'}) == []


# numpy 1.24.4's __init__: np.bool/np.int/... in __former_attrs__ (AttributeError), ``del long``; numpy 2.0.0
# defines np.bool/np.long again. mmdet3d: np.bool in ObjectRangeFilter until v1.1.0rc3 (PR #2339 in v1.1.0),
# dtype=np.long in DataBaseSampler.sample_all up to v1.4.0.
@pytest.mark.parametrize('mmdet3d, numpy, status', [
    ('1.0.0rc6', '1.23.5', None), ('1.0.0rc6', '1.24.0', 'FAIL'), ('1.0.0rc6', '1.26.4', 'FAIL'),
    ('0.17.3', '1.24.4', 'FAIL'), ('1.1.0rc3', '1.24.0', 'FAIL'), ('1.0.0rc6', '2.0.0', 'FAIL'),
    ('1.1.0', '1.26.4', 'WARN'), ('1.4.0', '1.24.0', 'WARN'), ('1.4.0', '1.23.5', None), ('1.4.0', '2.0.2', None),
])
def test_numpy_aliases(mmdet3d, numpy, status):
    found = F.numpy_alias_findings(mmdet3d, numpy)
    assert statuses(found) == ([status] if status else [])
    if status == 'FAIL' and numpy < '2':
        assert 'np.bool' in found[0].reason and 'ObjectRangeFilter' in found[0].reason
        assert found[0].fix == "pip install 'numpy==1.23.5' (or 'numpy<1.24')"


def test_np_long_with_a_known_pipeline():
    assert statuses(F.numpy_alias_findings('1.4.0', '1.26.4', ['ObjectSample', 'ObjectRangeFilter'])) == ['FAIL']
    assert F.numpy_alias_findings('1.4.0', '1.26.4', ['LoadPointsFromFile', 'ObjectRangeFilter']) == []


# mmcv docs/en/_static/version.json (Linux): mmcv 2.1.0 wheels for torch 1.8..2.1, mmcv 2.2.0 for 1.8..2.4.
@pytest.mark.parametrize('mmcv, torch, warn', [
    ('2.1.0', '2.1.2', False), ('2.1.0', '2.2.0', True), ('2.1.0', '2.0.1', False), ('2.2.0', '2.4.1', False),
    ('2.2.0', '2.5.0', True), ('2.0.1', '2.1.0', True), ('1.7.2', '2.5.0', False),
])
def test_mmcv_prebuilt_wheels(mmcv, torch, warn):
    found = F.mmcv_wheel_findings(mmcv, torch)
    assert statuses(found) == (['WARN'] if warn else [])


# mmengine 0.10.7 checkpoint.py: torch.load(filename, map_location=map_location); torch 2.6 weights_only=True;
# fixed on main (0.11.0rc0) by PR #1670.
@pytest.mark.parametrize('mmengine, torch, fail', [
    ('0.10.7', '2.6.0', True), ('0.8.0', '2.7.1', True), ('0.10.7', '2.5.1', False), ('0.11.0rc0', '2.6.0', False),
    ('0.10.7', '2.6.0+cu124', True),
])
def test_mmengine_torch_load(mmengine, torch, fail):
    found = F.mmengine_torch_load_findings(mmengine, torch)
    assert statuses(found) == (['FAIL'] if fail else [])
    if fail:
        assert 'weights_only' in found[0].reason and 'kradar_plugin.loading.load_checkpoint' in found[0].fix


def test_box_convention_findings():
    found = F.box_convention_findings('0.17.3', '1.0.0rc6')
    assert statuses(found) == ['WARN']
    assert '0.17.3' in found[0].reason and '1.0.0rc6' in found[0].reason
    assert "box_convention='mmdet3d<1.0'" in found[0].fix
    assert "box_convention='mmdet3d>=1.0'" in F.box_convention_findings('1.0.0rc0', '0.18.1')[0].fix
    assert F.box_convention_findings('1.0.0rc4', '1.4.0') == [] and F.box_convention_findings('0.17.1', '0.18.1') == []
    assert F.box_convention_findings(None, '1.0.0rc6') == []


def test_yapf():
    # "yapf 0.40.2 removed verify ... Fixed in mmengine (v0.8.5) and in mmcv 1.7.2".
    assert statuses(F.yapf_findings('0.40.2', {'mmcv-full': '1.7.1'})) == ['FAIL']
    assert F.yapf_findings('0.40.2', {'mmcv-full': '1.7.2'}) == []
    assert F.yapf_findings('0.40.1', {'mmcv-full': '1.4.0'}) == []
    found = F.yapf_findings('0.43.0', {'mmengine': '0.8.4'})
    # mmengine 0.8.4 wraps FormatCode's TypeError: "Failed to format the config file"; fixed in 0.8.5.
    assert statuses(found) == ['FAIL'] and 'Failed to format the config file' in found[0].reason
    assert "mmengine>=0.8.5" in found[0].fix
    assert F.yapf_findings('0.43.0', {'mmengine': '0.8.5', 'mmcv': '2.1.0'}) == []
