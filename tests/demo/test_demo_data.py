"""Demo data generator: deterministic, idempotent, EchoFusion's info format, the promised frame kinds."""
import os
import os.path as osp
import pickle
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.demo import data as demo_data

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))


def _load(path):
    with open(path, 'rb') as f:
        return pickle.load(f)


def _roi_valid(annos):
    """EchoFusion's format_anno validity, written out independently: centre from (-y, -z, x), inside
    [0, -6.4, -2] .. [72, 6.4, 6], azimuth strictly within +-50 degrees, class Sedan."""
    loc = np.asarray(annos['location'], dtype=float).reshape(-1, 3)
    x, y, z = loc[:, 2], -loc[:, 0], -loc[:, 1]
    inside = (x > 0) & (x < 72) & (y > -6.4) & (y < 6.4) & (z > -2) & (z < 6)
    az = np.degrees(np.arctan2(y, x))
    return inside & (az > -50) & (az < 50) & np.array([n == 'Sedan' for n in annos['name']], dtype=bool)


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('demo'))
    paths = demo_data.generate_demo_dataset(out, frames=60, seed=3)
    return out, paths


def test_generation_is_deterministic(demo, tmp_path):
    out, paths = demo
    other = demo_data.generate_demo_dataset(str(tmp_path), frames=60, seed=3)
    a, b = _load(paths['val']), _load(other['val'])
    assert len(a) == len(b) == 60
    for fa, fb in zip(a, b):
        for key in ('name', 'location', 'dimensions', 'rotation_y'):
            np.testing.assert_array_equal(fa['annos'][key], fb['annos'][key])
        ta = np.load(osp.join(out, fa['annos']['label_file'].split(',')[0], fa['radar']['bev_path']))
        tb = np.load(osp.join(str(tmp_path), fb['annos']['label_file'].split(',')[0], fb['radar']['bev_path']))
        np.testing.assert_array_equal(ta, tb)
    different = demo_data.generate_demo_dataset(str(tmp_path / 'seed4'), frames=60, seed=4)
    assert any(len(x['annos']['name']) != len(y['annos']['name']) or
               not np.array_equal(x['annos']['location'], y['annos']['location'])
               for x, y in zip(a, _load(different['val'])))


def test_second_call_is_skipped_and_new_parameters_regenerate(tmp_path):
    first = demo_data.generate_demo_dataset(str(tmp_path), frames=5, seed=1)
    assert first['generated']
    mtime = os.stat(first['val']).st_mtime_ns
    again = demo_data.generate_demo_dataset(str(tmp_path), frames=5, seed=1)
    assert not again['generated'] and os.stat(first['val']).st_mtime_ns == mtime
    changed = demo_data.generate_demo_dataset(str(tmp_path), frames=7, seed=1)
    assert changed['generated'] and len(_load(changed['val'])) == 7


def test_info_format_is_echofusions(demo):
    out, paths = demo
    for split in ('train', 'val'):
        infos = _load(paths[split])
        assert isinstance(infos, list) and infos
        for info in infos:
            assert {'capture_time', 'road_type', 'climate', 'image', 'radar', 'point_cloud', 'calib',
                    'annos'} <= set(info)
            assert {'image_idx', 'image_path', 'image_shape'} <= set(info['image'])
            assert {'ds_rdr_path', 'sp_rdr_path', 'ds_pcd_path', 'ra_path'} <= set(info['radar'])
            assert info['point_cloud'] == {'num_features': 9}
            for m in ('P0', 'P1', 'P2', 'P3', 'R0_rect', 'Tr_velo_to_cam', 'Tr_velo_to_radar'):
                assert info['calib'][m].shape == (4, 4)
            a = info['annos']
            n = len(a['name'])
            assert a['bbox'].shape == (n, 4) and (n == 0 or (a['bbox'] == [50, 50, 150, 150]).all())
            assert a['location'].shape == (n, 3) and a['dimensions'].shape == (n, 3)
            assert a['rotation_y'].shape == (n,) and a['score'].shape == (n,)
            assert (a['truncated'] == 0).all() and (a['occluded'] == 0).all() and (a['alpha'] == 0).all()
            seq, label = a['label_file'].split(',')
            assert label.endswith('.txt') and osp.isdir(osp.join(out, seq))
    ids = [i['image']['image_idx'] for s in ('train', 'val') for i in _load(paths[s])]
    assert len(ids) == len(set(ids))


def test_tensor_encodes_the_annotated_objects(demo):
    """Each object in the grid has power near its centre; the elevation channel there is close to its centre
    z (-location[1], sensor noise 0.15 m)."""
    out, paths = demo
    g = demo_data.DEMO_GRID
    checked = 0
    for info in _load(paths['val']):
        a = info['annos']
        t = np.load(osp.join(out, a['label_file'].split(',')[0], info['radar']['bev_path']))
        assert t.dtype == np.float32 and t.shape == (2,) + demo_data.grid_shape()
        for k in range(len(a['name'])):
            x, y, z = a['location'][k, 2], -a['location'][k, 0], -a['location'][k, 1]
            i, j = int((x - g['x_min']) // g['cell']), int((y - g['y_min']) // g['cell'])
            if not (2 <= i < t.shape[1] - 2 and 2 <= j < t.shape[2] - 2):
                continue
            assert t[0, i - 2:i + 3, j - 2:j + 3].max() > 0.2
            if t[0, i, j] > 0.5:
                assert abs(t[1, i, j] - z) < 0.75
            checked += 1
    assert checked > 50


@pytest.mark.parametrize('yaw', [0.0, 0.7, -2.0])
def test_render_elongates_along_heading(yaw):
    """An (l=4.8, w=1.8) object: power 1.5 m ahead along yaw is above power 1.5 m to its side."""
    g = demo_data.DEMO_GRID
    t = demo_data.render_radar_tensor([('Sedan', 30.0, 0.0, -0.2, 4.8, 1.8, 1.5, yaw)], np.random.RandomState(0),
                                      clutter=False, sensor_noise=False)

    def power(x, y):
        return t[0, int((x - g['x_min']) // g['cell']), int((y - g['y_min']) // g['cell'])]

    along = power(30.0 + 1.5 * np.cos(yaw), 1.5 * np.sin(yaw))
    across = power(30.0 - 1.5 * np.sin(yaw), 1.5 * np.cos(yaw))
    assert along > 2 * across
    assert abs(t[1, 60, 32] - (-0.2)) < 1e-6


def test_frame_kinds_present(demo):
    _, paths = demo
    infos = _load(paths['val'])
    names = np.concatenate([np.asarray(i['annos']['name'], dtype=str) for i in infos])
    assert 'Sedan' in names and 'Bus or Truck' in names
    counts = [len(i['annos']['name']) for i in infos]
    valid = [int(_roi_valid(i['annos']).sum()) for i in infos]
    assert 0 in counts                                          # a frame without any object
    assert any(c > 0 and v == 0 for c, v in zip(counts, valid))  # objects, but no valid GT
    outside = sum(c - v for c, v in zip(counts, valid))
    assert outside >= 5 and sum(valid) > 60


def test_demo_data_imports_with_numpy_alone():
    code = ('import sys; sys.modules["torch"] = None; sys.modules["mmcv"] = None; '
            'import importlib.util as u; s = u.spec_from_file_location("d", {!r}); m = u.module_from_spec(s); '
            's.loader.exec_module(m); print(m.grid_shape())').format(
                osp.join(ROOT, 'kradar_plugin', 'demo', 'data.py'))
    out = subprocess.run([sys.executable, '-c', code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().strip() == '(160, 64)'


def test_cli(tmp_path):
    cmd = [sys.executable, osp.join(ROOT, 'tools', 'create_demo_data.py'), '--out', str(tmp_path), '--frames', '6']
    first = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert first.returncode == 0, first.stderr.decode()
    assert 'generated' in first.stdout.decode()
    second = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert 'up to date' in second.stdout.decode()
    assert len(_load(str(tmp_path / 'kradar_infos_val.pkl'))) == 6
