"""Infos and results converted for all frames at once (kradar_columns) give what each frame converted alone
gives, evaluate under the frame policy, and name the frame of a bad value as infos[i] / results[i]."""
import numpy as np
import pytest

from kradar_plugin.evaluation.inputs.kradar_columns import Converted, gather_infos, gather_result_frames, info_list
from kradar_plugin.evaluation.inputs.kradar_format import info_to_gt_anno, result_to_dt_anno
from kradar_plugin.evaluation import KRadarEvaluator, kradar_eval
from kradar_plugin.evaluation.protocols import get_protocol

from ._data import dataset_metrics

CLASSES = ('Sedan', 'Bus or Truck', 'Pedestrian')
OLD, NEW = 'mmdet3d<1.0', 'mmdet3d>=1.0'


def _frames(n_frames=300, seed=0):
    """Infos and results with every irregularity the converter must handle: empty frames, classes not
    evaluated, objects on both sides of every region edge, optional fields missing in some frames, float32
    and 9-column boxes, wrapped and plain results, list inputs."""
    rs = np.random.RandomState(seed)
    infos, results = [], []
    for f in range(n_frames):
        n = rs.randint(0, 6)
        names = [CLASSES[i] for i in rs.randint(0, 3, n)] + (['Bicycle'] if rs.rand() < 0.2 else [])
        n = len(names)
        x, y, z = rs.uniform(-5, 80, n), rs.uniform(-10, 10, n), rs.uniform(-3, 3, n)
        annos = {'name': np.array(names), 'location': np.c_[-y, -z, x], 'dimensions': rs.uniform(1, 5, (n, 3)),
                 'rotation_y': rs.uniform(-4, 4, n), 'label_file': 'seq,label'}
        if f % 3:
            annos.update(truncated=np.zeros(n), occluded=np.zeros(n, int), alpha=rs.uniform(-1, 1, n),
                         bbox=rs.uniform(0, 100, (n, 4)))
        elif f % 2:
            annos['alpha'] = list(rs.uniform(-1, 1, n))
        infos.append({'annos': annos, 'sample_idx': f})
        m = rs.randint(0, 8)
        boxes = np.c_[rs.uniform(-5, 80, m), rs.uniform(-10, 10, m), rs.uniform(-3, 3, m), rs.uniform(1, 5, (m, 3)),
                      rs.uniform(-4, 4, m)]
        if f % 4 == 1:
            boxes = np.c_[boxes, np.zeros((m, 2))]         # velocities
        res = {'boxes_3d': boxes.astype(np.float32) if f % 2 else boxes, 'scores_3d': rs.rand(m),
               'labels_3d': rs.randint(0, 3, m)}
        if f % 5 == 2:
            res = dict((k, v.tolist()) for k, v in res.items())
        results.append({'pts_bbox': res} if f % 2 else res)
    return infos, results


def _converted(infos, results, classes, box_convention=OLD, dt_z_is_bottom=False):
    """Infos (a list, or a dict with 'data_list') and results read once into columns."""
    return Converted(gather_infos(info_list(infos)), gather_result_frames(list(results), tuple(classes)), classes,
                     box_convention, dt_z_is_bottom)


def _frames_of(data, offsets):
    """Per-frame dicts of columns concatenated with frame ``offsets``."""
    return [dict((k, v[offsets[f]:offsets[f + 1]]) for k, v in data.items()) for f in range(len(offsets) - 1)]


def _same(a, b):
    assert sorted(a) == sorted(b)
    for key in a:
        if key == 'name':
            assert [str(v) for v in a[key]] == [str(v) for v in b[key]]
        else:
            assert np.array_equal(np.asarray(a[key], dtype=np.float64), np.asarray(b[key], dtype=np.float64)), key


@pytest.mark.parametrize('protocol', ['legacy', 'revised', 'fixed'])
@pytest.mark.parametrize('convention,bottom', [(OLD, False), (NEW, True)])
def test_all_frames_at_once_equals_each_frame_alone(protocol, convention, bottom):
    infos, results = _frames()
    proto = get_protocol(protocol)
    gt_data, gt_off, dt_data, dt_off = _converted(infos, results, CLASSES, convention, bottom).columns(proto)
    gt, dt = _frames_of(gt_data, gt_off), _frames_of(dt_data, dt_off)
    assert len(gt) == len(dt) == len(infos)
    kept = []
    for i, (info, res) in enumerate(zip(infos, results)):
        g = info_to_gt_anno(info, CLASSES, proto.pcd_limit_range, proto.azimuth_range, frame_index=i)
        d = result_to_dt_anno(res, CLASSES, proto.pcd_limit_range,
                              proto.azimuth_range if proto.dt_azimuth_filter else None, dt_z_is_bottom=bottom,
                              frame_index=i, box_convention=convention)
        _same(gt[i], g)
        _same(dt[i], d)
        if len(g['name']) or not proto.drop_frames_without_gt:
            kept.append(i)
    # the evaluator gets the same numbers from the columns and from the per-frame lists of the frames the
    # protocol keeps (EchoFusion's format_anno drops those without GT before its kradar_eval)
    evaluator = KRadarEvaluator(list(CLASSES), protocol, ('bbox', 'bev', '3d'), box_convention=convention,
                                dt_z_is_bottom=bottom)
    evaluator.process(infos, results)
    direct = evaluator.evaluate()
    assert evaluator.evaluations[0].n_frames == len(kept)
    assert (len(kept) < len(infos)) == proto.drop_frames_without_gt     # the data has frames without GT
    _, listed = kradar_eval([gt[i] for i in kept], [dt[i] for i in kept], list(CLASSES),
                            eval_types=('bbox', 'bev', '3d'), protocol=proto)
    assert direct == listed


def test_one_reading_serves_every_protocol():
    infos, results = _frames(50, seed=1)
    conv = _converted({'data_list': infos}, results, CLASSES)
    for protocol in ('legacy', 'fixed'):
        proto = get_protocol(protocol)
        gt_side, dt_side = conv.sides(proto)
        gt = [info_to_gt_anno(info, CLASSES, proto.pcd_limit_range, proto.azimuth_range) for info in infos]
        dt = [result_to_dt_anno(res, CLASSES, proto.pcd_limit_range,
                                proto.azimuth_range if proto.dt_azimuth_filter else None, box_convention=OLD)
              for res in results]
        assert gt_side.n_frames == len(gt) == len(infos)
        assert np.array_equal(gt_side.data['location'], np.concatenate([g['location'] for g in gt]))
        assert np.array_equal(dt_side.data['score'], np.concatenate([d['score'] for d in dt]))


def _info(n=2, **changes):
    annos = {'name': np.array(['Sedan'] * n), 'location': np.tile([[-1.0, -0.5, 20.0]], (n, 1)),
             'dimensions': np.tile([[1.8, 1.6, 4.5]], (n, 1)), 'rotation_y': np.zeros(n)}
    annos.update(changes)
    return {'annos': annos}


def _res(boxes=None, scores=None, labels=None):
    boxes = np.tile([[20.0, 1, 0.5, 4.5, 1.8, 1.6, 0.3]], (2, 1)) if boxes is None else boxes
    return {'boxes_3d': boxes, 'scores_3d': [0.9, 0.8] if scores is None else scores,
            'labels_3d': [0, 0] if labels is None else labels}


@pytest.mark.parametrize('bad,message', [
    (_info(location=np.array([[-1.0, -0.5, 20.0], [np.nan, 0, 30]])),
     r"infos\[5\]\['annos'\]\['location'\]\[1\] = \[nan, 0.0, 30.0\] is not finite"),
    (_info(bbox=np.zeros((3, 4))), r"infos\[5\]\['annos'\]: 'bbox' has shape \(3, 4\) but 'name' has 2 entries"),
    (_info(dimensions=np.zeros((2, 2))), r"infos\[5\]\['annos'\]: 'dimensions' has shape \(2, 2\)"),
    (_info(location=np.zeros((1, 3))), r"infos\[5\]\['annos'\]: 'location' has shape \(1, 3\) but 'name' has 2"),
    (_info(occluded=['a', 'b']), r"infos\[5\]\['annos'\]\['occluded'\]: cannot be read as numbers"),
    (_info(truncated={'a': 1}), r"infos\[5\]\['annos'\]\['truncated'\]: cannot be read as numbers"),
    (_info(name=np.array([['Sedan', 'x'], ['Sedan', 'y']])),
     r"infos\[5\]\['annos'\]\['name'\]: expected one class name per object, got shape \(2, 2\)"),
    ({'annos': {'name': np.array(['Sedan']), 'location': np.zeros((1, 3)), 'rotation_y': [0.0]}},
     r"infos\[5\]\['annos'\]: missing field 'dimensions'"),
    ({'sample_idx': 5}, r"infos\[5\]: expected an EchoFusion info dict with an 'annos' entry"),
])
def test_bad_info_names_its_frame(bad, message):
    infos = [_info() for _ in range(8)]
    infos[5] = bad
    with pytest.raises(ValueError, match=message):
        gather_infos(infos)


@pytest.mark.parametrize('bad,message', [
    (_res(boxes=np.array([[20.0, 1, 0.5, 4.5, 1.8, 1.6, 0.3], [20.0, 1, np.inf, 4.5, 1.8, 1.6, 0.3]])),
     r'results\[6\]: boxes_3d\[1\] = \[20.0, 1.0, inf, 4.5, 1.8, 1.6, 0.3\] is not finite'),
    (_res(scores=[0.9, np.nan]), r'results\[6\]: scores_3d\[1\] = nan is not finite'),
    (_res(labels=[0, 3]), r"results\[6\]: labels_3d\[1\] = 3 is not an index into class_names \['Sedan', "),
    (_res(labels=[0.0, 1.5]), r'results\[6\]: labels_3d must be integers, got \[0.0, 1.5\]'),
    (_res(labels=['a', 'b']), r"results\[6\]: labels_3d must be integers, got \['a', 'b'\]"),
    (_res(scores=[0.9]), r'results\[6\]: scores_3d has 1 entries but boxes_3d has 2'),
])
def test_bad_result_names_its_frame_and_row(bad, message):
    results = [_res() for _ in range(8)]
    results[6] = bad
    with pytest.raises(ValueError, match=message):
        gather_result_frames(results, CLASSES)


def test_frame_counts_must_match():
    with pytest.raises(ValueError, match='1 results for 2 infos'):
        _converted([_info(), _info()], [_res()], CLASSES)
    gt_side, dt_side = _converted([], [], CLASSES).sides(get_protocol('fixed'))
    assert gt_side.n_frames == dt_side.n_frames == 0


def test_only_the_fields_the_evaluation_reads_are_checked():
    infos = [_info(alpha=np.array([0.0, np.nan])), _info()]
    results = [{'pts_bbox': _res()}, _res()]
    _, metrics = dataset_metrics(infos, results, ['Sedan'], 'legacy', eval_types=('bev', '3d'), box_convention=OLD)
    _, clean = dataset_metrics([_info(), _info()], results, ['Sedan'], 'legacy', eval_types=('bev', '3d'),
                               box_convention=OLD)
    assert metrics == clean and metrics['Sedan/bev@0.3'] > 0     # alpha is not read by BEV / 3D
    with pytest.raises(ValueError, match=r"gt_annos\[0\]\['alpha'\]\[1\] = nan is not finite"):
        dataset_metrics(infos, results, ['Sedan'], 'legacy', eval_types=('bbox', 'bev'), box_convention=OLD)
    gt_side, _ = _converted(infos[1:], results[1:], ['Sedan']).sides(get_protocol('fixed'), set())
    assert gt_side.fields == frozenset() and 'alpha' not in gt_side.data and 'location' in gt_side.data


def test_results_of_frames_the_protocol_drops_are_checked_too():
    infos = [_info(), _info(0)]                         # frame 1 has no GT: legacy drops it
    results = [_res(), _res(scores=[0.9, np.nan])]
    for protocol in ('legacy', 'fixed'):
        with pytest.raises(ValueError, match=r'results\[1\]: scores_3d\[1\] = nan is not finite'):
            dataset_metrics(infos, results, ['Sedan'], protocol, box_convention=OLD)


def test_names_given_as_bytes_are_read_as_text():
    info = _info(name=np.array([b'Sedan', u'Sedan\u00e9'.encode('utf-8')], dtype=object))
    gt = info_to_gt_anno(info, ('Sedan',), (-1e3, -1e3, -1e3, 1e3, 1e3, 1e3), (-180, 180))
    assert list(gt['name']) == ['Sedan']
