"""Tolerant version parsing: the spellings environments really report."""
import pytest

from kradar_plugin.facts.versions import (BOX_CONVENTIONS, Version, compare, cuda_from_local_tag, in_range,
                                           major_minor, mmdet3d_box_convention, normalize_name, parse_version)


@pytest.mark.parametrize('low, high', [
    ('0.48.0', '0.53.0'), ('0.9', '0.10'), ('1.9.1', '1.10.0+cu113'), ('2.0.0rc1', '2.0.0'),
    ('2.0.0a1', '2.0.0b1'), ('2.0.0b2', '2.0.0rc1'), ('1.0.0.dev0', '1.0.0a0'), ('2.0.0', '2.0.0.post1'),
    ('1.0.0rc6', '1.0.0'), ('11.2', '11.10'), ('470.42.01', '535.104.05'), ('1.19.5', '1.20.3'),
])
def test_order(low, high):
    assert Version(low) < high and Version(high) > low and compare(low, high) == -1


@pytest.mark.parametrize('a, b', [('1.20', '1.20.0'), ('1.10.0+cu113', '1.10.0'), ('v0.17.3', '0.17.3'),
                                  (' 2.0 ', '2.0.0')])
def test_equal(a, b):
    assert Version(a) == b and hash(Version(a)) == hash(Version(b)) and compare(a, b) == 0


def test_local_tag_and_parts():
    v = Version('1.10.0+cu113')
    assert v.local == 'cu113' and v.public == '1.10.0' and v.part(1) == 10 and v.part(5) == 0
    assert cuda_from_local_tag('1.10.0+cu113') == '11.3'
    assert cuda_from_local_tag('2.0.1+cu117') == '11.7'
    assert cuda_from_local_tag('1.8.0+cu102') == '10.2'
    assert cuda_from_local_tag('2.0.1+cpu') == 'cpu'
    assert cuda_from_local_tag('2.0.1') is None
    assert major_minor('1.10.0+cu113') == '1.10' and major_minor(None) is None


def test_unparseable_is_unknown():
    assert parse_version(None) is None and parse_version('') is None and parse_version('not-a-version') is None
    with pytest.raises(ValueError, match='cannot parse'):
        Version('abc')


def test_range_and_names():
    assert in_range('1.4.0', '1.3.8', '1.5.0') and in_range('1.5.0', '1.3.8', '1.5.0')
    assert not in_range('1.5.0', '1.3.8', '1.5.0', max_inclusive=False) and not in_range('1.3.7', '1.3.8')
    assert normalize_name('mmcv_full') == 'mmcv-full' and normalize_name('NumPy.Base') == 'numpy-base'


# mmdet3d 1.0.0rc0 introduced the new LiDAR box convention (coordinate-system refactor, made on the
# v1.0.0.dev0 branch); every 0.x version keeps the old one. Pre-releases of 1.0.0 sort below 1.0.0 but already
# use the new one.
@pytest.mark.parametrize('version, convention', [
    ('0.17.3', 'mmdet3d<1.0'), ('v0.18.1', 'mmdet3d<1.0'), ('0.5.0', 'mmdet3d<1.0'),
    ('1.0.0rc0', 'mmdet3d>=1.0'), ('1.0.0rc6', 'mmdet3d>=1.0'), ('1.0.0rc6+4bb3c64', 'mmdet3d>=1.0'),
    ('1.0.0.dev0', 'mmdet3d>=1.0'), ('1.1.0rc3', 'mmdet3d>=1.0'), ('1.4.0', 'mmdet3d>=1.0'),
    (None, None), ('', None), ('unknown', None),
])
def test_mmdet3d_box_convention(version, convention):
    assert mmdet3d_box_convention(version) == convention


def test_box_convention_names_are_the_dataset_option_values():
    assert BOX_CONVENTIONS == ('mmdet3d<1.0', 'mmdet3d>=1.0')
