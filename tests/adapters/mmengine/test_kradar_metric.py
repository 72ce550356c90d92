"""``KRadarMetric`` gives the numbers and keys of the mmcv 1.x ``evaluate`` (``KRadarEvalMixin``) for the
same frames and boxes under each protocol, pairs results with frames by ``sample_idx`` whatever their
order, saves the results first, and its saved files re-run the evaluation offline."""
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch
from mmdet3d.structures import LiDARInstance3DBoxes

from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import KRadarEvalMixin
from kradar_plugin.adapters.mmengine.kradar_det3d import annos_to_lidar_boxes
from kradar_plugin.adapters.mmengine.kradar_metric import KRadarMetric, evaluate_saved

from .helpers import demo_data

pytestmark = [pytest.mark.mm2]

META = {'classes': ('Sedan',), 'box_convention': 'mmdet3d<1.0', 'results_z_is_bottom': True}


@pytest.fixture(scope='module')
def infos(tmp_path_factory):
    root = demo_data(tmp_path_factory.mktemp('kradar'), frames=12, train_frames=4)
    with open(root + '/kradar_infos_val.pkl', 'rb') as f:
        return root + '/kradar_infos_val.pkl', pickle.load(f)


def predictions(infos, seed=0):
    """Per frame: the Sedan GT boxes (z bottom, (l, w, h), yaw) jittered, plus one false positive."""
    rng = np.random.RandomState(seed)
    out = []
    for info in infos:
        names = np.asarray(info['annos']['name']).reshape(-1)
        boxes = annos_to_lidar_boxes(info['annos'])[names == 'Sedan'].astype(np.float64)
        boxes[:, :2] += rng.normal(0, 0.3, size=(len(boxes), 2))
        boxes = np.concatenate([boxes, [[30.0, 2.0, -1.0, 4.5, 1.8, 1.5, 0.3]]])
        out.append({'boxes_3d': boxes, 'scores_3d': rng.uniform(0.1, 0.9, len(boxes)),
                    'labels_3d': np.zeros(len(boxes), dtype=np.int64)})
    return out


def data_samples(preds, order):
    """What mmengine's Evaluator hands ``process``: ``to_dict()``-ed Det3DDataSamples (real box objects)."""
    return [{'sample_idx': i, 'pred_instances_3d': {
        'bboxes_3d': LiDARInstance3DBoxes(torch.tensor(preds[i]['boxes_3d'], dtype=torch.float32)),
        'scores_3d': torch.tensor(preds[i]['scores_3d'], dtype=torch.float32),
        'labels_3d': torch.tensor(preds[i]['labels_3d'])}} for i in order]


class MixinHost(KRadarEvalMixin):
    """The mmcv 1.x evaluate() on the same frames, with KRadarDet3DDataset's box meaning."""
    CLASSES = ('Sedan',)
    box_convention = 'mmdet3d<1.0'
    results_z_is_bottom = True

    def __init__(self, infos, results_dir):
        self.data_infos = infos
        self.results_dir = results_dir


@pytest.mark.parametrize('protocol', ['legacy', 'revised', 'fixed'])
def test_same_numbers_and_keys_as_the_1x_evaluate(infos, tmp_path, protocol):
    ann_file, frames = infos
    preds = predictions(frames)
    metric = KRadarMetric(ann_file=ann_file, protocol=protocol, results_dir=str(tmp_path))
    metric.dataset_meta = META
    metric.process({}, data_samples(preds, range(len(frames))))
    ours = metric.evaluate(len(frames))
    # float32 boxes, as the model's LiDARInstance3DBoxes hold them
    preds32 = [dict(p, boxes_3d=p['boxes_3d'].astype(np.float32), scores_3d=p['scores_3d'].astype(np.float32))
               for p in preds]
    theirs = MixinHost(frames, str(tmp_path)).evaluate([{'pts_bbox': p} for p in preds32], protocol=protocol)
    assert ours == theirs
    assert len(ours) >= 9 and all(k.startswith('pts_bbox/') for k in ours)  # bbox, bev, 3d @ 3 IoUs at least
    assert 0.0 < ours['pts_bbox/Sedan/bev@0.3'] <= 100.0
    if protocol == 'legacy':
        assert 'pts_bbox/kradar/Sedan_BEV_easy_strict' in ours  # EchoFusion's keys


def test_results_are_matched_by_sample_idx_and_saved_first(infos, tmp_path):
    ann_file, frames = infos
    preds = predictions(frames)
    metric = KRadarMetric(ann_file=ann_file, protocol='fixed', results_dir=str(tmp_path))
    metric.dataset_meta = META
    order = np.random.RandomState(1).permutation(len(frames))
    metric.process({}, data_samples(preds, order))
    shuffled = metric.evaluate(len(frames))
    metric.process({}, data_samples(preds, range(len(frames))))
    assert metric.evaluate(len(frames)) == shuffled
    # the saved files re-run the evaluation offline, to the same numbers
    result_str, offline = evaluate_saved(metric.last_results_file)
    assert offline == shuffled and 'Sedan' in result_str
    with open(metric.last_results_file, 'rb') as f:
        saved = pickle.load(f)
    assert [r['sample_idx'] for r in saved] == list(range(len(frames)))


@pytest.mark.parametrize('protocol', ['legacy', 'fixed'])
def test_the_offline_command_reproduces_the_metrics(infos, tmp_path, protocol):
    ann_file, frames = infos
    metric = KRadarMetric(ann_file=ann_file, protocol=protocol, results_dir=str(tmp_path))
    metric.dataset_meta = META
    metric.process({}, data_samples(predictions(frames), range(len(frames))))
    online = metric.evaluate(len(frames))
    command = metric.offline_eval_command(metric.last_results_file)
    import shlex
    assert command.startswith('kradar-eval ') and '--box-convention=mmdet3d<1.0' in shlex.split(command)
    out = tmp_path / 'offline.json'
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get('PATH', ''))
    proc = subprocess.run(command + ' --no-progress --json ' + str(out), shell=True, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    with open(str(out)) as f:
        offline = json.load(f)
    offline = offline[0] if isinstance(offline, list) else offline
    assert offline['protocol'] == protocol
    offline = {'pts_bbox/' + k: round(float(v), 4) for k, v in offline['metrics'].items()}
    assert len(offline) >= 6 and offline == {k: online[k] for k in offline}  # the JSON keeps the per-IoU keys


def test_perfect_predictions_score_100_under_the_fixed_protocol(infos, tmp_path):
    ann_file, frames = infos
    preds = []
    for info in frames:
        names = np.asarray(info['annos']['name']).reshape(-1)
        boxes = annos_to_lidar_boxes(info['annos'])[names == 'Sedan']
        preds.append({'boxes_3d': boxes.astype(np.float64), 'scores_3d': np.linspace(0.9, 0.5, len(boxes)),
                      'labels_3d': np.zeros(len(boxes), dtype=np.int64)})
    metric = KRadarMetric(ann_file=ann_file, protocol='fixed', results_dir=str(tmp_path))
    metric.dataset_meta = META
    metric.process({}, data_samples(preds, range(len(frames))))
    metrics = metric.evaluate(len(frames))
    for kind in ('bev', '3d'):
        for iou in ('0.3', '0.5', '0.7'):
            assert metrics['pts_bbox/Sedan/{}@{}'.format(kind, iou)] == 100.0, metrics


def test_a_sample_idx_outside_the_infos_is_an_error(infos, tmp_path):
    ann_file, frames = infos
    metric = KRadarMetric(ann_file=ann_file, results_dir=str(tmp_path))
    metric.dataset_meta = META
    preds = predictions(frames)
    samples = data_samples(preds, [0])
    samples[0]['sample_idx'] = len(frames) + 3
    metric.process({}, samples)
    with pytest.raises(ValueError, match='sample_idx \\[15\\] outside the 12 frames'):
        metric.evaluate(1)


def logged_by_mmengine(call):
    """What ``call`` logs through mmengine's current logger (``print_log(..., logger='current')``), read from a
    handler of our own: the logger's terminal handler holds whatever stream it was made with (another test's,
    under pytest-xdist), so capturing the terminal is not reliable."""
    import io
    import logging
    from mmengine.logging import MMLogger
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = MMLogger.get_current_instance()
    logger.addHandler(handler)
    try:
        call()
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_groups_reach_the_evaluator_and_its_logged_table(infos, tmp_path):
    """``groups=`` in the ``val_evaluator`` dict: a bad group fails when the metric is built; a good one is a
    column of the logged per-condition table, with the numbers of the same frames' weather when it holds
    exactly that weather's sequences."""
    from kradar_plugin.evaluation.conditions import from_infos
    ann_file, frames = infos
    with pytest.raises(ValueError, match="'1-b' is not a sequence number"):
        KRadarMetric(ann_file=ann_file, groups=['clean=1-b'])
    rows = from_infos(frames)
    sequences = sorted(set(int(r['sequence']) for r in rows))
    metric = KRadarMetric(ann_file=ann_file, protocol='kradar', results_dir=str(tmp_path),
                          groups={'mine': sequences}, groups_only=True)
    metric.dataset_meta = META
    evaluator = metric.evaluator()
    assert evaluator.groups_only and [g.name for g in evaluator.user_groups] == ['mine']
    metric.process({}, data_samples(predictions(frames), range(len(frames))))
    logged = logged_by_mmengine(lambda: metric.evaluate(len(frames)))
    assert '| Class | Total | mine |' in logged


def test_excluded_samples_are_stated_by_both_evaluates(infos, tmp_path, caplog):
    """Skipped samples (``--skip-bad-samples``) handed to the metric and to the 1.x evaluate: the same numbers
    as the frames without them, ``samples_excluded`` among the metrics, the list in the fingerprint line."""
    ann_file, frames = infos
    preds = predictions(frames)
    gone = [dict(index=5, identity=[['label_file', frames[5]['annos']['label_file']]], type='ValueError',
                 message='EOF', stage='loading', rank=0)]
    keep = [i for i in range(len(frames)) if i != 5]
    plain = KRadarMetric(ann_file=ann_file, protocol='legacy', results_dir=str(tmp_path / 'a'))
    plain.dataset_meta = META
    plain.process({}, data_samples(preds, keep))
    expected = plain.evaluate(len(keep))
    metric = KRadarMetric(ann_file=ann_file, protocol='legacy', results_dir=str(tmp_path / 'b'))
    metric.dataset_meta, metric.excluded_samples = META, gone
    metric.process({}, data_samples(preds, keep))
    out = {}
    logged = logged_by_mmengine(lambda: out.update(metric.evaluate(len(keep))))
    assert out == dict(expected, **{'pts_bbox/samples_excluded': 1})
    line = '; 1 samples excluded: index 5 (label_file {})'.format(frames[5]['annos']['label_file'])
    assert line in logged
    preds32 = [dict(p, boxes_3d=p['boxes_3d'].astype(np.float32), scores_3d=p['scores_3d'].astype(np.float32))
               for p in preds]
    host = MixinHost([frames[i] for i in keep], str(tmp_path / 'c'))
    import logging
    with caplog.at_level(logging.INFO, logger='kradar_plugin'):   # no mmcv.utils here: plain logging
        theirs = host.evaluate([{'pts_bbox': preds32[i]} for i in keep], protocol='legacy', excluded_samples=gone)
    assert theirs == out and line in caplog.text
    listed = [p for p in os.listdir(str(tmp_path / 'c')) if p.endswith('.excluded.json')]
    assert len(listed) == 1 and json.load(open(str(tmp_path / 'c' / listed[0])))[0]['index'] == 5
    results = str(tmp_path / 'c' / 'r.pkl')
    assert '--excluded-samples ' + results[:-4] + '.excluded.json' in host.offline_eval_command(
        results, protocol='legacy', excluded_samples=gone)
