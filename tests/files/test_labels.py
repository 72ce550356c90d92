"""Hand-derived cases of K-Radar's file formats: every version, the real files' quirks, and one clear error
(file, line, field, value) for each malformed input."""
import math
import os

import pytest

from kradar_plugin.files import KRadarFileError, create_data
from kradar_plugin.files.calibration import read_calibration
from kradar_plugin.files.description import read_description
from kradar_plugin.files.labels import parse_label, read_label
from kradar_plugin.files.radar_frame import kradar_objects
from kradar_plugin.files.splits import parse_sequences, read_split
from kradar_plugin.files.tree import KRadarTree

HEADER = '* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)=00033_00001_00035_00002_00034, timestamp=1625.5'


def _write(path, text, binary=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if binary:
        with open(path, 'wb') as f:
            f.write(text)
    else:
        with open(path, 'w', newline='') as f:
            f.write(text)
    return path


@pytest.mark.parametrize('version,line,expect', [
    ('v1.0', '*, 3, 2, Sedan, 10.5, -1.25, 0.5, 90.0, 2.0, 0.9, 0.75', ('Sedan', 'R', 3, 2)),
    ('v1.1', '*, L, 3, 2, Bus or Truck, 10.5, -1.25, 0.5, 90.0, 2.0, 0.9, 0.75', ('Bus or Truck', 'L', 3, 2)),
    ('v1.1', '*,R,3,2,Sedan,10.5,-1.25,0.5,90.0,2.0,0.9,0.75', ('Sedan', 'R', 3, 2)),
    ('v2.0', '*, 3, Sedan, 10.5, -1.25, 0.5, 90.0, 2.0, 0.9, 0.75', ('Sedan', 'R', 3, -1)),
    ('v2.1', '*, L1, 3, Sedan, 10.5, -1.25, 0.5, 90.0, 2.0, 0.9, 0.75', ('Sedan', 'L1', 3, -1)),
])
def test_each_version_reads_its_fields(version, line, expect):
    label = parse_label([HEADER, line], version)
    assert label.indices == {'rdr': '00033', 'ldr64': '00001', 'camf': '00035', 'ldr128': '00002', 'camr': '00034'}
    assert label.timestamp == '1625.5'
    (obj,) = label.objects
    assert (obj.name, obj.avail, obj.id, obj.prev_id) == expect
    assert (obj.x, obj.y, obj.z, obj.yaw_deg, obj.half_l, obj.half_w, obj.half_h) == (
        10.5, -1.25, 0.5, 90.0, 2.0, 0.9, 0.75)


def test_radar_frame_adds_calibration_doubles_sizes_radians():
    label = parse_label([HEADER, '*, 0, -1, Sedan, 10.5, -1.25, 0.5, 90.0, 2.0, 0.9, 0.75'], 'v1.0')
    calib = type('C', (), {'x': -2.5, 'y': 0.25})()
    ((name, box, track, avail),) = kradar_objects(label, calib, z_offset=0.7)
    assert name == 'Sedan' and track == (0, -1) and avail == 'R'
    assert box == (8.0, -1.0, 0.5 + 0.7, math.pi / 2, 4.0, 1.8, 1.5)
    assert kradar_objects(label, calib, z_offset=0.0)[0][1][2] == 0.5


def test_quirks_crlf_hash_lines_merged_header_blank_lines_empty_frames(tmp_path):
    crlf = _write(str(tmp_path / 'a.txt'), HEADER + '\r\n*, 0, -1, Sedan, 1, 2, 3, 4, 5, 6, 7\r\n'
                  '#, 1, -1, Sedan, 1, 2, 3, 4, 5, 6, 7\r\n\r\n')
    label = read_label(crlf, 'v1.0')
    assert len(label.objects) == 1 and label.objects[0].half_h == 7.0
    merged = parse_label([HEADER + '*, 0, Sedan, 1, 2, 3, 4, 5, 6, 7', '*, 1, Bus or Truck, 1, 2, 3, 4, 5, 6, 7'], 'v2.0')
    assert [o.id for o in merged.objects] == [0, 1] and merged.timestamp == '1625.5'
    assert parse_label([HEADER], 'v2.1').objects == []
    assert parse_label([HEADER, '', '  '], 'v1.0').objects == []
    bom = _write(str(tmp_path / 'b.txt'), ('\ufeff' + HEADER + '\n').encode('utf-8'), binary=True)
    assert read_label(bom, 'v1.0').indices['rdr'] == '00033'


@pytest.mark.parametrize('version,line,needles', [
    ('v1.0', '*, 0, -1, Sedan, 1, two, 3, 4, 5, 6, 7', [':2:', "field y = 'two'", 'expected a number']),
    ('v2.0', '*, 0, Sedan, 1, 2, 3, 4, 5, 6', [':2:', 'has 10 fields', 'this one 9']),
    ('v2.1', '*, R, 0, -1, Sedan, 1, 2, 3, 4, 5, 6, 7', [':2:', 'has 11 fields', 'this one 12', 'v1.1']),
    ('v1.0', '*, R, 0, Sedan, 1, 2, 3, 4, 5, 6, 7', [':2:', "field id = 'R'", 'v2.1']),
    ('v2.1', '*, 0, -1, Sedan, 1, 2, 3, 4, 5, 6, 7', [':2:', "field avail = '0'", 'v1.0']),
    ('v1.0', '*, 0, -1, Sedan, 1, nan, 3, 4, 5, 6, 7', [':2:', "field y = 'nan'", 'finite']),
    ('v1.0', '+, 0, -1, Sedan, 1, 2, 3, 4, 5, 6, 7', [':2:', "field marker = '+'"]),
    ('v1.1', '*, R, 0, -1, , 1, 2, 3, 4, 5, 6, 7', [':2:', "field class = ''"]),
])
def test_malformed_line_names_file_line_field_value(tmp_path, version, line, needles):
    path = _write(str(tmp_path / '00033_00001.txt'), HEADER + '\n' + line + '\n')
    with pytest.raises(KRadarFileError) as err:
        read_label(path, version)
    message = str(err.value)
    assert message.startswith(path) and '\n' not in message
    for needle in needles:
        assert needle in message


@pytest.mark.parametrize('text,needle', [
    ('', 'empty label file'), ('Sedan 1 2 3\n', "field header = 'Sedan 1 2 3'"),
    ('* idx(x)=00001_00002, timestamp=1\n', "field idx = '00001_00002'"),
    # the header K-Radar's labelling tool writes (uis/ui_labeling.py), with a v1.0-shaped object line
    ('* radar idx: 00010, lidar idx: 00008, camera idx: 00030, time: 1.5, prev lidar idx: -1\n'
     '*, 0, -1, Sedan, 1.0, 2.0, -0.5, 0.0, 2.0, 1.0, 0.8\n', "K-Radar's labelling tool")])
def test_bad_header(tmp_path, text, needle):
    path = _write(str(tmp_path / 'h.txt'), text)
    with pytest.raises(KRadarFileError, match=needle):
        read_label(path, 'v1.0')


def test_binary_directory_and_missing_files_are_one_line_errors(tmp_path):
    binary = _write(str(tmp_path / 'bin.txt'), b'\x80\x81\x00', binary=True)
    with pytest.raises(KRadarFileError, match='not UTF-8'):
        read_label(binary, 'v1.0')
    with pytest.raises(KRadarFileError, match='is a directory'):
        read_label(str(tmp_path), 'v1.0')
    with pytest.raises(KRadarFileError, match='no such label file'):
        read_label(str(tmp_path / 'none.txt'), 'v1.0')


def test_calibration_and_description(tmp_path):
    calib = read_calibration(_write(str(tmp_path / 'c.txt'), 'frame difference,x,y\n32,-2.54,0.3'))
    assert (calib.frame_difference, calib.x, calib.y) == (32.0, -2.54, 0.3)
    with pytest.raises(KRadarFileError, match=r":2: field y = 'abc'"):
        read_calibration(_write(str(tmp_path / 'd.txt'), 'frame difference,x,y\n32,-2.54,abc\n'))
    for text in ('urban,day,normal', 'urban,day,normal\n', 'urban,day,normal\r\n'):
        desc = read_description(_write(str(tmp_path / 'desc.txt'), text))
        assert tuple(desc) == ('urban', 'day', 'normal')
    with pytest.raises(KRadarFileError, match="field description = 'urban,day'"):
        read_description(_write(str(tmp_path / 'e.txt'), 'urban,day'))


def test_split_lists_and_sequences(tmp_path):
    path = _write(str(tmp_path / 'test.txt'), '1,00033_00001.txt\n21,00040_00008.txt\r\n02,00041_00009.txt')
    assert [(e.sequence, e.label) for e in read_split(path)] == [
        ('1', '00033_00001.txt'), ('21', '00040_00008.txt'), ('2', '00041_00009.txt')]
    assert [e.sequence for e in read_split(path, parse_sequences('1-20'))] == ['1', '2']
    assert parse_sequences('1,3,5-7') == set(['1', '3', '5', '6', '7'])
    with pytest.raises(KRadarFileError, match=r":2: field entry = '1 00033_00001.txt'"):
        read_split(_write(str(tmp_path / 'bad.txt'), '1,00033_00001.txt\n1 00033_00001.txt\n'))
    with pytest.raises(ValueError, match='--sequences'):
        parse_sequences('a-b')


@pytest.mark.parametrize('version', ['v1.1', 'v2.0', 'v2.1'])
def test_labels_dir_as_parent_archive_or_inner_folder(demo_tree, version):
    inner = KRadarTree(demo_tree['root'], version, demo_tree['labels_dir']).labels_base
    archive = os.path.join(demo_tree['labels_dir'], 'kradar_revised_label_v' + version[1:].replace('.', '_'))
    for given in (demo_tree['labels_dir'], archive, inner):
        assert KRadarTree(demo_tree['root'], version, given).labels_base == inner
    with pytest.raises(KRadarFileError, match='unzip K-Radar'):
        KRadarTree(demo_tree['root'], version, demo_tree['imagesets'])


def test_missing_label_names_the_split_and_the_file(demo_tree, tmp_path, capsys):
    split_dir = tmp_path / 'split'
    split_dir.mkdir()
    (split_dir / 'test.txt').write_text('1,00040_00008.txt\n1,99999_99999.txt')
    rc = create_data.main(['--root-path', demo_tree['root'], '--out-dir', str(tmp_path / 'out'), '--split-dir',
                           str(split_dir), '--no-progress'])
    err = capsys.readouterr().err
    assert rc == 2 and err.count('\n') == 1 and err.startswith('kradar-create-data: error: ')
    assert os.path.join('1', 'info_label', '99999_99999.txt') in err and str(split_dir / 'test.txt') in err
    assert '(line 2)' in err
    (split_dir / 'test.txt').write_text('1,00040_00008.txt\n33,00001_00001.txt')
    rc = create_data.main(['--root-path', demo_tree['root'], '--out-dir', str(tmp_path / 'out'), '--split-dir',
                           str(split_dir), '--no-progress'])
    err = capsys.readouterr().err
    assert rc == 2 and 'sequence 33 is in no dataset root' in err and ':2:' in err
    rc = create_data.main(['--root-path', demo_tree['root'], '--out-dir', str(tmp_path / 'out'), '--split-dir',
                           str(split_dir), '--no-progress', '--sequences', '1-4'])
    assert rc == 0


def test_sequences_over_several_roots(demo_tree, tmp_path):
    """Sequences spread over two roots (symlinked folders) give the same infos as one root."""
    a, b = tmp_path / 'disk_a', tmp_path / 'disk_b'
    a.mkdir()
    b.mkdir()
    for seq in ('1', '2'):
        os.symlink(os.path.join(demo_tree['root'], seq), str(a / seq))
    for seq in ('3', '4'):
        os.symlink(os.path.join(demo_tree['root'], seq), str(b / seq))
    import pickle
    outs = []
    for roots, out in (([demo_tree['root']], tmp_path / 'one'), ([str(a), str(b)], tmp_path / 'two')):
        assert create_data.main(['--root-path'] + roots + ['--out-dir', str(out), '--split-dir',
                                                         demo_tree['split_dir'], '--no-progress']) == 0
        with open(str(out / 'kradar_infos_test.pkl'), 'rb') as f:
            outs.append(pickle.load(f))
    assert len(outs[0]) == len(outs[1]) == 24
    for x, y in zip(*outs):
        assert x['annos']['location'].tobytes() == y['annos']['location'].tobytes()
    with pytest.raises(KRadarFileError, match='also in'):
        KRadarTree([demo_tree['root'], str(a)])


def test_lines_kradar_skips_are_skipped_and_reported(demo_tree, tmp_path, capsys):
    """K-Radar's loader skips ('* split err') v1.0/v1.1 lines of another field count and v1.1 lines whose ids
    are not integers: so does the reader, recording them; the converter's summary says so in one line."""
    label = parse_label([HEADER, '*, 0, -1, Sedan, 1, 2, 3, 4, 5, 6', '*, 1, -1, Sedan, 1, 2, 3, 4, 5, 6, 7'], 'v1.0')
    assert [o.id for o in label.objects] == [1] and label.skipped == [(2, '10 fields instead of 11')]
    label = parse_label([HEADER, '*, R, x, -1, Sedan, 1, 2, 3, 4, 5, 6, 7', '*, R, 2, 1, Sedan, 1, 2, 3, 4, 5, 6, 7'],
                        'v1.1')
    assert [o.id for o in label.objects] == [2] and label.skipped[0][0] == 2
    import shutil
    root = str(tmp_path / 'tree')
    shutil.copytree(demo_tree['root'], root, ignore=shutil.ignore_patterns('radar_bev', 'revised_labels'))
    first = open(os.path.join(root, 'split', 'test.txt')).read().split('\n')[0]
    seq, name = first.split(',')
    with open(os.path.join(root, seq, 'info_label', name), 'a') as f:
        f.write('*, 7, -1, Sedan, 1, 2, 3\n')
    rc = create_data.main(['--root-path', root, '--out-dir', str(tmp_path / 'out'), '--split-dir',
                           os.path.join(root, 'split'), '--no-progress'])
    err = capsys.readouterr().err
    line = len(open(os.path.join(root, seq, 'info_label', name)).read().splitlines())
    assert rc == 0 and "note: 1 object lines of another field count or with non-integer ids (skipped, as K-Radar's " \
        "loader skips them ('* split err')): {}/{}:{}\n".format(seq, name, line) in err
