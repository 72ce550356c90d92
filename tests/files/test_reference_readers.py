"""The reader and the converter against K-Radar's and EchoFusion's own readers run on the same generated tree
(from fetched snapshots; skipped without them, the hand-derived tests in ``test_labels`` always run)."""
import os
import pickle

import pytest

from kradar_plugin.files import create_data
from kradar_plugin.files.labels import read_label
from kradar_plugin.files.radar_frame import kradar_objects
from kradar_plugin.files.splits import read_split
from kradar_plugin.files.tree import KRadarTree

from . import _snapshots as snap

need_kradar = pytest.mark.skipif(snap.kradar_repo() is None, reason='no K-Radar snapshot (KRADAR_REPO)')
need_echofusion = pytest.mark.skipif(snap.echofusion_repo() is None, reason='no EchoFusion snapshot (KRADAR_ECHOFUSION_REPO)')
VERSIONS = ('v1.0', 'v1.1', 'v2.0', 'v2.1')


def _frames(tree_paths):
    out = []
    for split in ('test', 'train'):
        out += read_split(os.path.join(tree_paths['split_dir'], split + '.txt'))
    return out


@need_kradar
@pytest.mark.parametrize('version', VERSIONS)
@pytest.mark.parametrize('only_r', [False, True])
def test_radar_frame_objects_equal_kradar_get_label(demo_tree, version, only_r):
    tree = KRadarTree(demo_tree['root'], version, demo_tree['labels_dir'])
    loader = snap.kradar_loader(version.replace('.', '_'), only_r=only_r)
    compared = 0
    for entry in _frames(demo_tree):
        path = tree.label_path(entry.sequence, entry.label)
        item = snap.kradar_item(demo_tree['root'], entry.sequence, {version.replace('.', '_'): path})
        theirs = loader.get_label(item)['meta']
        label = read_label(path, version)
        mine = kradar_objects(label, tree.calibration(entry.sequence), only_r=only_r)
        assert mine == theirs['label'], (version, path)      # the same floats, names, tracks and avail
        assert label.indices == dict((k, theirs['idx'][k]) for k in ('rdr', 'ldr64', 'camf', 'ldr128', 'camr'))
        assert label.timestamp == theirs['idx']['tstamp'].strip()
        assert [tree.calibration(entry.sequence).x, tree.calibration(entry.sequence).y, 0.7] == theirs['calib']
        desc = loader.get_description(loader.get_label(item))['meta']['desc']
        mine_desc = tree.description(entry.sequence)
        assert (mine_desc.road_type, mine_desc.capture_time, mine_desc.climate) == (
            desc['road_type'], desc['capture_time'], desc['climate'].strip())
        compared += len(mine)
    assert compared > 50
    if only_r and version in ('v1.1', 'v2.1'):
        full = sum(len(read_label(tree.label_path(e.sequence, e.label), version).objects) for e in _frames(demo_tree))
        assert compared < full      # the tree has L / L1 objects that onlyR drops


@need_echofusion
def test_v1_infos_annos_identical_to_echofusion(demo_tree, tmp_path):
    out = tmp_path / 'infos'
    rc = create_data.main(['--root-path', demo_tree['root'], '--out-dir', str(out), '--split-dir',
                           demo_tree['imagesets'], '--no-progress'])
    assert rc == 0
    with open(str(out / 'kradar_infos_val.pkl'), 'rb') as f:
        infos = pickle.load(f)
    lines = [e.line for e in read_split(os.path.join(demo_tree['imagesets'], 'val.txt'))]
    assert [i['annos']['label_file'] for i in infos] == lines
    readers = snap.echofusion_readers()
    empty = 0
    for index, info in enumerate(infos):
        seq, label = info['annos']['label_file'].split(',')
        seq_dir = os.path.join(demo_tree['root'], seq)
        theirs = snap.echofusion_annos(os.path.join(seq_dir, 'info_label', label),
                                       os.path.join(seq_dir, 'info_calib', 'calib_radar_lidar.txt'),
                                       info['annos']['label_file'])
        mine = info['annos']
        assert sorted(mine) == sorted(theirs)
        for key in theirs:
            if key == 'label_file':
                assert mine[key] == theirs[key]
                continue
            assert mine[key].dtype == theirs[key].dtype and mine[key].shape == theirs[key].shape, key
            assert mine[key].tobytes() == theirs[key].tobytes(), (index, key)
        empty += len(mine['name']) == 0
        desc = readers['get_description'](os.path.join(seq_dir, 'description.txt'))
        assert [info[k] for k in ('road_type', 'capture_time', 'climate')] == [
            desc[k].strip() for k in ('road_type', 'capture_time', 'climate')]
        assert info['image']['image_idx'] == index and info['label_version'] == 'v1.0'
        assert info['sequence'] == seq and info['frame']['rdr'] + '_' + info['frame']['ldr64'] + '.txt' == label
    assert empty >= 1        # a frame without objects: EchoFusion's float64 empty arrays


@need_kradar
def test_split_lines_as_kradar_reads_them(demo_tree):
    """K-Radar's get_split: 'seq,label' per line, the label's newline stripped; no final newline."""
    path = os.path.join(demo_tree['split_dir'], 'test.txt')
    with open(path) as f:
        theirs = [tuple(line.rstrip('\n').split(',')) for line in f.readlines()]
    assert [(e.sequence, e.label) for e in read_split(path)] == theirs


@need_kradar
@pytest.mark.parametrize('version,lines', [
    ('v1.0', ['*, 0, -1, Sedan, 1, 2, 3, 4, 5, 6', '#, 1, -1, Sedan, 1, 2, 3, 4, 5, 6, 7',
              '*, 2, 1, Sedan, 10.5, -1.25, 0.5, 90.0, 2.0, 0.9, 0.75']),
    ('v1.1', ['*, R, x, -1, Sedan, 1, 2, 3, 4, 5, 6, 7', '*,L,2,1,Bus or Truck,10.5,-1.25,0.5,90.0,2.0,0.9,0.75',
              '*, R, 3, 2, Sedan, 1, 2, 3, 4, 5, 6']),
])
def test_lines_kradar_skips(tmp_path, version, lines):
    """Lines K-Radar's get_label skips ('* split err') are skipped here too, the rest read the same."""
    seq_dir = tmp_path / '1'
    (seq_dir / 'info_calib').mkdir(parents=True)
    (seq_dir / 'info_calib' / 'calib_radar_lidar.txt').write_text('frame difference,x,y\n32,-2.54,0.3')
    path = str(tmp_path / 'label.txt')
    header = '* idx(tesseract_os2-64_cam-front_os1-128_cam-lrr)=00033_00001_00035_00002_00034, timestamp=1.5'
    with open(path, 'w') as f:
        f.write('\n'.join([header] + lines) + '\n')
    loader = snap.kradar_loader(version.replace('.', '_'))
    theirs = loader.get_label(snap.kradar_item(str(tmp_path), '1', {version.replace('.', '_'): path}))['meta']
    tree = KRadarTree(str(tmp_path))
    label = read_label(path, version)
    assert kradar_objects(label, tree.calibration('1')) == theirs['label'] and len(theirs['label']) == 1
    assert len(label.skipped) >= 1
