"""KRadarDataset + evaluate on real mmcv/mmdet: registry build from the demo config, pipelines, inference
through MMDataParallel + mmdet's single_gpu_test, results pickle first, both result layouts, box objects,
slicing data_infos, the mixin and the registry patch."""
import logging
import os
import os.path as osp
import pickle

import numpy as np
import pytest
import torch
from mmcv import Config
from mmcv.parallel import MMDataParallel
from torch.utils.data import Dataset

import kradar_plugin  # noqa: F401
from kradar_plugin.demo import data as demo_data
from kradar_plugin.evaluation.inputs import box_convention
from kradar_plugin.adapters.mmcv1.kradar_dataset import REGISTERED_NAME, KRadarDataset, annos_to_lidar_boxes
from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import KRadarEvalMixin, patch_dataset_evaluate
from mmdet.apis import single_gpu_test
from mmdet.datasets import DATASETS, build_dataloader, build_dataset
from mmdet.models import build_detector

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__)))))
CONFIG = osp.join(ROOT, 'configs', 'kradar', 'demo_eval_only.py')


@pytest.fixture(scope='module')
def cfg(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('demo')) + '/'
    demo_data.generate_demo_dataset(root, frames=60, seed=5)
    c = Config.fromfile(CONFIG)
    for split in ('train', 'val', 'test'):
        c.data[split].data_root = root
    return c


@pytest.fixture(scope='module')
def val_results(cfg):
    ds = build_dataset(cfg.data.val)
    model = build_detector(cfg.model)
    model.init_weights()
    loader = build_dataloader(ds, 8, 0, dist=False, shuffle=False)
    return single_gpu_test(MMDataParallel(model), loader)


def _in_echofusion_roi(a, k):
    """EchoFusion's GT validity written out: Sedan, centre strictly inside [0, -6.4, -2] .. [72, 6.4, 6],
    azimuth strictly inside +-50 degrees."""
    x, y, z = a['location'][k, 2], -a['location'][k, 0], -a['location'][k, 1]
    return (a['name'][k] == 'Sedan' and 0 < x < 72 and -6.4 < y < 6.4 and -2 < z < 6
            and abs(np.degrees(np.arctan2(y, x))) < 50)


def _sedan_gt_as_results(ds):
    """Perfect detections: every valid GT object as a LiDAR box (x, y, z_bottom, l, w, h, yaw), converted here
    directly from the info fields (location (-y, -z, x) of the centre, dimensions (w, h, l))."""
    out = []
    for info in ds.data_infos:
        a = info['annos']
        keep = [k for k in range(len(a['name'])) if _in_echofusion_roi(a, k)]
        boxes = [[a['location'][k, 2], -a['location'][k, 0], -a['location'][k, 1] - a['dimensions'][k, 1] / 2,
                  a['dimensions'][k, 2], a['dimensions'][k, 0], a['dimensions'][k, 1], a['rotation_y'][k]]
                 for k in keep]
        out.append({'boxes_3d': torch.tensor(boxes, dtype=torch.float32).reshape(-1, 7),
                    'scores_3d': torch.linspace(0.9, 0.5, len(keep)), 'labels_3d': torch.zeros(len(keep),
                                                                                           dtype=torch.long)})
    return out


def test_built_from_registry_with_the_demo_config(cfg):
    assert DATASETS.get(REGISTERED_NAME) is KRadarDataset
    ds = build_dataset(cfg.data.val)
    assert isinstance(ds, KRadarDataset) and len(ds) == 60 and ds.CLASSES == ('Sedan',)
    sample = ds[3]
    assert tuple(sample['radar'].data.shape) == (2, 160, 64) and sample['radar'].stack
    meta = sample['img_metas'].data
    assert meta['frame_index'] == 3 and meta['sample_idx'] == ds.data_infos[3]['image']['image_idx']
    assert meta['radar_filename'].endswith(ds.data_infos[3]['radar']['bev_path'])
    assert 'gt_bboxes_3d' not in sample


def test_train_pipeline_carries_lidar_gt(cfg):
    ds = build_dataset(cfg.data.train)
    for i in range(len(ds)):
        a = ds.data_infos[i]['annos']
        if len(a['name']) >= 2:
            break
    sample = ds[i]
    boxes, labels = sample['gt_bboxes_3d'].data, sample['gt_labels_3d'].data
    assert boxes.shape == (len(a['name']), 7)
    k = 1
    expected = [a['location'][k, 2], -a['location'][k, 0], -a['location'][k, 1] - a['dimensions'][k, 1] / 2,
                a['dimensions'][k, 2], a['dimensions'][k, 0], a['dimensions'][k, 1], a['rotation_y'][k]]
    np.testing.assert_allclose(boxes[k].numpy(), expected, rtol=1e-5, atol=1e-5)
    assert labels.tolist() == [0 if n == 'Sedan' else -1 for n in a['name']]


def test_annos_to_lidar_boxes_by_hand():
    annos = {'location': np.array([[-2.0, 0.5, 30.0]]), 'dimensions': np.array([[1.8, 1.5, 4.6]]),
             'rotation_y': np.array([0.3])}
    np.testing.assert_allclose(annos_to_lidar_boxes(annos), [[30.0, 2.0, -0.5 - 0.75, 4.6, 1.8, 1.5, 0.3]],
                               rtol=1e-6)
    assert annos_to_lidar_boxes({'location': np.zeros((0,)), 'dimensions': np.zeros((0,)),
                                 'rotation_y': np.zeros((0,))}).shape == (0, 7)


def test_slicing_data_infos_keeps_everything_consistent(cfg, val_results, tmp_path):
    ds = build_dataset(cfg.data.val)
    ds.data_infos = ds.data_infos[:10]
    assert len(ds) == 10 and ds.flag.shape == (10,)
    loader = build_dataloader(ds, 4, 0, dist=False, shuffle=False)
    assert sum(len(b['img_metas'].data[0]) for b in loader) == 10
    metrics = ds.evaluate(val_results[:10], pklfile_prefix=str(tmp_path / 'ten'))
    assert metrics and all(np.isfinite(v) for v in metrics.values())
    with pytest.raises(ValueError, match='60 results for 10 frames'):
        ds.evaluate(val_results, pklfile_prefix=str(tmp_path / 'wrong'))
    assert osp.exists(str(tmp_path / 'wrong_results.pkl'))  # saved before the count check


def test_inference_and_evaluate_end_to_end(cfg, val_results, tmp_path):
    ds = build_dataset(cfg.data.val)
    assert len(val_results) == len(ds)
    logger = logging.getLogger('kradar_test_e2e')
    logger.setLevel(logging.INFO)
    handler = logging.FileHandler(str(tmp_path / 'run.log'))
    logger.addHandler(handler)
    try:
        metrics = ds.evaluate(val_results, logger=logger)
    finally:
        logger.removeHandler(handler)
        handler.close()
    log = open(str(tmp_path / 'run.log')).read()
    saved = [f for f in os.listdir(str(tmp_path)) if f.startswith('kradar_results_') and f.endswith('.pkl')]
    assert len(saved) == 1 and saved[0] in log                    # default: next to the runner's log file
    assert 'Sedan AP@0.30' in log or 'AP@0.30' in log
    for key in ('pts_bbox/kradar/Sedan_BEV_easy_strict', 'pts_bbox/kradar/Sedan_3D_easy_loose',
                'pts_bbox/Sedan/bev@0.5', 'pts_bbox/Sedan/3d@0.7'):
        assert key in metrics
    # the tiny model finds the demo's cars: high AP at IoU 0.3, lower at 0.7
    assert metrics['pts_bbox/Sedan/bev@0.3'] > 80
    assert metrics['pts_bbox/Sedan/bev@0.7'] < metrics['pts_bbox/Sedan/bev@0.3']
    assert metrics['pts_bbox/kradar/Sedan_BEV_easy_strict'] == pytest.approx(metrics['pts_bbox/Sedan/bev@0.3'], abs=1e-3)
    with open(osp.join(str(tmp_path), saved[0]), 'rb') as f:
        raw = pickle.load(f)
    assert len(raw) == len(ds) and isinstance(raw[0]['boxes_3d'], np.ndarray)
    # the demo infos carry K-Radar's conditions (per sequence): the per-weather paper table is logged, its
    # Total equal to the pooled metric
    assert 'K-Radar evaluation of pts_bbox per condition (legacy protocol)' in log, log[-3000:]
    assert '| Class | Total | Normal | Overcast | Fog | Rain | Sleet | LightSnow | HeavySnow |' in log
    row = [l for l in log.splitlines() if l.startswith('| Sedan |')][1]   # IoU 0.3 table: AP3D, APBEV, #GT rows
    assert float(row.split('|')[2]) == pytest.approx(metrics['pts_bbox/Sedan/bev@0.3'], abs=0.01)


def test_perfect_detections_score_100(cfg, tmp_path):
    """GT converted to LiDAR boxes in this test: >40 GT boxes, all matched -> AP 100 at every threshold."""
    ds = build_dataset(cfg.data.val)
    for protocol in ('legacy', 'fixed'):
        metrics = ds.evaluate(_sedan_gt_as_results(ds), protocol=protocol,
                              pklfile_prefix=str(tmp_path / protocol))
        for key in ('pts_bbox/Sedan/bev@0.3', 'pts_bbox/Sedan/bev@0.7', 'pts_bbox/Sedan/3d@0.7'):
            assert metrics[key] == pytest.approx(100.0, abs=1e-6), (protocol, key)


def test_benchmark_and_score_threshold_as_evaluation_settings(cfg, tmp_path):
    """``evaluation=dict(protocol='kradar', benchmark='v1', score_threshold=...)`` in a config reaches the
    evaluation: perfect detections (scores 0.9 .. 0.5 per frame) score 100 inside K-Radar v1's region; with
    score > 0.95 none is left (AP 0)."""
    ds = build_dataset(cfg.data.val)
    results = _sedan_gt_as_results(ds)
    kept = ds.evaluate(results, protocol='kradar', benchmark='v1', pklfile_prefix=str(tmp_path / 'v1'))
    assert kept['pts_bbox/Sedan/bev@0.7'] == pytest.approx(100.0, abs=1e-6)
    none = ds.evaluate(results, protocol='kradar', benchmark='v1', score_threshold=0.95,
                       pklfile_prefix=str(tmp_path / 'thr'))
    assert none['pts_bbox/Sedan/bev@0.3'] == 0.0
    with pytest.raises(ValueError, match="benchmark='v3'"):
        ds.evaluate(results, benchmark='v3', pklfile_prefix=str(tmp_path / 'bad'))


def test_box_convention_is_fixed_whatever_mmdet3d_is_installed(cfg, val_results, tmp_path, monkeypatch):
    """The demo's GT boxes are built without mmdet3d in 0.17.3's convention: its evaluate reads results that
    way under any installed mmdet3d (the other reading scores differently, so the equality is not vacuous)."""
    ds = build_dataset(cfg.data.val)
    assert ds.box_convention == 'mmdet3d<1.0'
    runs = []
    for version in ('0.17.3', '1.0.0rc6', None):
        monkeypatch.setattr(box_convention, 'installed_mmdet3d_version', lambda: version)
        runs.append(ds.evaluate(val_results, pklfile_prefix=str(tmp_path / str(version))))
    assert runs[0] == runs[1] == runs[2]
    other = ds.evaluate(val_results, pklfile_prefix=str(tmp_path / 'other'), box_convention='mmdet3d>=1.0')
    assert other['pts_bbox/Sedan/bev@0.7'] < runs[0]['pts_bbox/Sedan/bev@0.7'] - 10


def test_both_layouts_and_box_objects_give_the_same_metrics(cfg, val_results, tmp_path):
    ds = build_dataset(cfg.data.val)

    class Boxes(object):  # duck-typed LiDARInstance3DBoxes
        def __init__(self, tensor):
            self.tensor = tensor

    flat = ds.evaluate(val_results, pklfile_prefix=str(tmp_path / 'flat'))
    wrapped = ds.evaluate([{'pts_bbox': r} for r in val_results], pklfile_prefix=str(tmp_path / 'pts'))
    objects = ds.evaluate([dict(r, boxes_3d=Boxes(r['boxes_3d'])) for r in val_results],
                          pklfile_prefix=str(tmp_path / 'obj'))
    arrays = ds.evaluate([{k: v.numpy() for k, v in r.items()} for r in val_results],
                         pklfile_prefix=str(tmp_path / 'np'))
    assert flat == wrapped == objects == arrays


def test_results_pickle_written_before_a_failing_evaluation(cfg, val_results, tmp_path):
    ds = build_dataset(cfg.data.val)
    bad = list(val_results)
    bad[7] = {'boxes_3d': torch.zeros(3, 5), 'scores_3d': torch.zeros(3), 'labels_3d': torch.zeros(3)}
    with pytest.raises(ValueError, match=r'results\[7\]: boxes_3d must have shape \(N, 7\+\)'):
        ds.evaluate(bad, pklfile_prefix=str(tmp_path / 'bad'))
    with open(str(tmp_path / 'bad_results.pkl'), 'rb') as f:
        raw = pickle.load(f)
    assert len(raw) == 60 and raw[7]['boxes_3d'].shape == (3, 5)
    with pytest.raises(ValueError, match=r'results\[2\]: missing'):
        ds.evaluate(val_results[:2] + [{'boxes': 1}] + val_results[3:], pklfile_prefix=str(tmp_path / 'b2'))


def test_bad_info_pickle_names_frame_and_field(tmp_path):
    infos = [{'annos': {'name': np.array(['Sedan']), 'location': np.zeros((1, 2)), 'dimensions': np.ones((1, 3)),
                        'rotation_y': np.zeros(1), 'label_file': '1,a.txt'}}]
    path = str(tmp_path / 'bad.pkl')
    with open(path, 'wb') as f:
        pickle.dump(infos, f)
    with pytest.raises(ValueError, match=r"frame 0 annos\['location'\] has shape \(1, 2\)"):
        KRadarDataset(path, pipeline=[], test_mode=True)


class _ForeignKRadar(Dataset):
    """Stands in for EchoFusion's dataset: data_infos, CLASSES, pcd_limit_range, max_azimtuth_rad, and an
    evaluate() that must be replaced."""
    CLASSES = ('Sedan',)

    def __init__(self, ann_file, pipeline=None, test_mode=True):
        with open(ann_file, 'rb') as f:
            self.data_infos = pickle.load(f)
        self.pcd_limit_range = [0, -6.4, -2.0, 72.0, 6.4, 6.0]
        self.max_azimtuth_rad = [-50 * np.pi / 180., 50 * np.pi / 180.]

    def __len__(self):
        return len(self.data_infos)

    def evaluate(self, results, **kwargs):
        raise RuntimeError('the original evaluate must not run')


def test_mixin_and_registry_patch(cfg, val_results, tmp_path):
    ann_file = osp.join(cfg.data.val.data_root, 'kradar_infos_val.pkl')
    ours = build_dataset(dict(cfg.data.val, results_z_is_bottom=False)).evaluate(
        _with_centre_z(val_results), pklfile_prefix=str(tmp_path / 'o'))
    assert ours == build_dataset(cfg.data.val).evaluate(val_results, pklfile_prefix=str(tmp_path / 'b'))

    class Mixed(KRadarEvalMixin, _ForeignKRadar):
        pass

    # EchoFusion-style models output centre z: the mixin's default (results_z_is_bottom False). The demo
    # model's boxes are 0.17.3-style; a foreign dataset reads the installed mmdet3d's convention unless told.
    assert Mixed(ann_file).evaluate(_with_centre_z(val_results), pklfile_prefix=str(tmp_path / 'm'),
                                    box_convention='mmdet3d<1.0') == ours

    name = 'ForeignKRadarForTest'
    DATASETS.register_module(name=name, module=_ForeignKRadar, force=True)
    patched = patch_dataset_evaluate(name)
    assert patch_dataset_evaluate(name) is patched                 # idempotent
    assert DATASETS.get(name) is patched and issubclass(patched, _ForeignKRadar)
    ds = build_dataset(dict(type=name, ann_file=ann_file))
    assert ds.evaluate(_with_centre_z(val_results), pklfile_prefix=str(tmp_path / 'p'),
                       box_convention='mmdet3d<1.0') == ours
    assert pickle.loads(pickle.dumps(ds)).data_infos[0]['image']['image_idx'] == ds.data_infos[0]['image']['image_idx']
    with pytest.raises(KeyError, match='NoSuchDataset'):
        patch_dataset_evaluate('NoSuchDataset')


def _with_centre_z(results):
    """Our model's z is the bottom; EchoFusion-convention datasets expect the centre z."""
    out = []
    for r in results:
        b = r['boxes_3d'].clone()
        b[:, 2] += b[:, 5] / 2
        out.append(dict(r, boxes_3d=b))
    return out


def test_relabel_keywords_as_evaluation_settings(tmp_path):
    """``evaluation=dict(kradar_root=..., label_version='v2.0', labels_dir=...)`` reaches the evaluation: the
    dataset built on v1.0 infos (``kradar-create-data`` of K-Radar's own files), scoring perfect v1.0 detections
    against the v2.0 labels, gives what the dataset built on v2.0 infos gives; not v1.0's 100."""
    from kradar_plugin.demo import tree as demo_tree
    from kradar_plugin.files import create_data
    tree = demo_tree.generate_tree(str(tmp_path / 'tree'), frames=40, train_frames=8)
    datasets = {}
    for version in ('v1.0', 'v2.0'):
        out = str(tmp_path / version) + '/'
        assert create_data.main(['--root-path', tree['root'], '--out-dir', out, '--split-dir', tree['imagesets'],
                                 '--label-version', version, '--labels-dir', tree['labels_dir'], '--no-progress',
                                 '--radar-path', 'bev_path=radar_bev/bev_{rdr}.npy']) == 0
        c = Config.fromfile(CONFIG)
        c.data.val.data_root = tree['root'] + '/'
        c.data.val.ann_file = out + 'kradar_infos_val.pkl'
        datasets[version] = build_dataset(c.data.val)
    results = _sedan_gt_as_results(datasets['v1.0'])
    relabel = dict(kradar_root=tree['root'], label_version='v2.0', labels_dir=tree['labels_dir'])
    v1 = datasets['v1.0'].evaluate(results, protocol='kradar', pklfile_prefix=str(tmp_path / 'a'))
    relabelled = datasets['v1.0'].evaluate(results, protocol='kradar', pklfile_prefix=str(tmp_path / 'b'), **relabel)
    direct = datasets['v2.0'].evaluate(results, protocol='kradar', pklfile_prefix=str(tmp_path / 'c'))
    assert v1['pts_bbox/Sedan/bev@0.3'] == pytest.approx(100.0, abs=1e-6)
    assert relabelled == direct and relabelled['pts_bbox/Sedan/bev@0.7'] < 100.0
    command = datasets['v1.0'].offline_eval_command('r.pkl', protocol='kradar', **relabel)
    assert '--kradar-root {} --label-version v2.0 --labels-dir {}'.format(tree['root'], tree['labels_dir']) in command
    # the offline command reproduces every key the run logged, the 2D 'bbox' keys included (legacy evaluates them)
    logged = datasets['v2.0'].evaluate(results, protocol='legacy', pklfile_prefix=str(tmp_path / 'd'))
    command = datasets['v2.0'].offline_eval_command(str(tmp_path / 'd_results.pkl'), protocol='legacy')
    out = tmp_path / 'offline.json'
    import shlex
    import subprocess
    import sys
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get('PATH', ''))
    proc = subprocess.run(shlex.split(command) + ['--no-progress', '--json', str(out)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    import json
    with open(str(out)) as f:
        offline = json.load(f)
    offline = offline[0] if isinstance(offline, list) else offline
    assert '--eval-types bbox bev 3d' in command and any('/bbox@' in k for k in logged)
    assert dict(('pts_bbox/' + k, v) for k, v in offline['logged_metrics'].items()) == logged
