"""TinyRadarPeakDetector on real mmdet/mmcv: peaks, moments, boxes, training steps, MMDataParallel and DDP."""
import math
import os

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from mmcv.parallel import MMDataParallel, MMDistributedDataParallel, collate, scatter_kwargs
from mmcv.parallel import DataContainer as DC

import kradar_plugin  # noqa: F401  (registers the detector)
from kradar_plugin.demo import data as demo_data
from kradar_plugin.demo.tiny_radar import _HALF_MAX_STD_PER_SIGMA, find_peaks, peak_moments
from tests.launching import free_port, gather
from mmdet.models import DETECTORS, build_detector

GRID = {'x_min': 0.0, 'y_min': -16.0, 'cell': 0.5}
MODEL = dict(type='TinyRadarPeakDetector', classes=['Sedan'], grid=GRID)


def _tensor(objects, clutter=False, seed=0):
    return demo_data.render_radar_tensor(objects, np.random.RandomState(seed), clutter=clutter,
                                         sensor_noise=clutter)


def _batch(tensors, gts=None):
    samples = []
    for k, t in enumerate(tensors):
        s = {'radar': DC(torch.from_numpy(t), stack=True), 'img_metas': DC({'sample_idx': k}, cpu_only=True)}
        if gts is not None:
            boxes, labels = gts[k]
            s['gt_bboxes_3d'] = DC(torch.tensor(boxes, dtype=torch.float32).reshape(-1, 7))
            s['gt_labels_3d'] = DC(torch.tensor(labels, dtype=torch.long))
        samples.append(s)
    return collate(samples, samples_per_gpu=len(samples))


def test_registered():
    assert DETECTORS.get('TinyRadarPeakDetector') is not None


def test_find_peaks_by_hand():
    heat = np.zeros((6, 5), dtype=np.float32)
    heat[1, 1] = 0.9
    heat[4, 3] = 0.5
    heat[4, 4] = 0.5     # plateau: one peak (first in row-major order)
    heat[1, 2] = 0.4     # neighbour of a higher cell: no peak
    heat[5, 0] = 0.05    # below threshold
    rows, cols, values = find_peaks(heat, 0.1, 10)
    assert list(zip(rows.tolist(), cols.tolist())) == [(1, 1), (4, 3)]
    np.testing.assert_allclose(values, [0.9, 0.5])
    assert len(find_peaks(heat, 0.1, 1)[0]) == 1


def test_half_max_constant_by_numeric_integration():
    """std of a unit Gaussian weighted by (g - max/2)+ along one axis, integrated on a fine grid."""
    u = np.linspace(-3, 3, 1201)
    gu, gv = np.meshgrid(u, u, indexing='ij')
    w = np.maximum(np.exp(-0.5 * (gu ** 2 + gv ** 2)) - 0.5, 0)
    std = math.sqrt((w * gu ** 2).sum() / w.sum())
    assert abs(std - _HALF_MAX_STD_PER_SIGMA) < 2e-3


@pytest.mark.parametrize('yaw', [0.0, 0.4, -1.1, 2.5])
def test_moments_recover_centre_and_heading(yaw):
    obj = ('Sedan', 30.3, 1.2, -0.2, 4.6, 1.8, 1.5, yaw)
    t = _tensor([obj])
    rows, cols, _ = find_peaks(t[0], 0.1, 5)
    assert len(rows) == 1
    x, y, angle, std = peak_moments(t[0], int(rows[0]), int(cols[0]), 6, GRID)
    assert math.hypot(x - 30.3, y - 1.2) < 0.1
    assert abs(math.sin(angle - yaw)) < 0.06          # heading modulo pi (0.5 m grid)
    assert abs(std / (_HALF_MAX_STD_PER_SIGMA / 4.0) - 4.6) < 0.5


def test_detections_with_initial_parameters():
    model = build_detector(MODEL)
    model.init_weights()
    objs = [('Sedan', 20.0, -2.0, -0.3, 4.4, 1.8, 1.5, 0.3), ('Bus or Truck', 45.0, 3.0, 0.5, 10.0, 2.5, 3.0, 0.0)]
    data = _batch([_tensor(objs)])
    out = MMDataParallel(model).forward(return_loss=False, rescale=True, **data)
    assert len(out) == 1
    res = out[0]
    assert res['boxes_3d'].shape == (1, 7) and res['labels_3d'].tolist() == [0]  # the truck is not a Sedan
    x, y, zb, dx, dy, dz, yaw = res['boxes_3d'][0].tolist()
    assert math.hypot(x - 20.0, y + 2.0) < 0.1
    assert (dx, dy, dz) == pytest.approx((4.5, 1.85, 1.55), abs=1e-5)          # the priors
    assert zb == pytest.approx(-0.3 - 1.55 / 2, abs=1e-4)                      # centre z - h / 2
    assert abs(math.sin(yaw - 0.3)) < 0.06
    assert 0.8 < float(res['scores_3d'][0]) <= 1.0  # peak cell value of an amplitude-1 blob
    both = build_detector(dict(MODEL, classes=['Sedan', 'Bus or Truck'], output='pts_bbox'))
    res2 = MMDataParallel(both).forward(return_loss=False, rescale=True, **data)[0]['pts_bbox']
    assert sorted(res2['labels_3d'].tolist()) == [0, 1]
    truck = res2['boxes_3d'][res2['labels_3d'] == 1][0]
    assert float(truck[3]) == pytest.approx(10.0, abs=1e-4)


def test_empty_input_and_bad_shape():
    model = build_detector(MODEL)
    out = model.simple_test(torch.zeros(2, 2, 160, 64), [{}, {}])
    assert [r['boxes_3d'].shape for r in out] == [(0, 7), (0, 7)]
    with pytest.raises(ValueError, match='B, C, X, Y'):
        model.simple_test(torch.zeros(2, 160, 64), [{}])


def test_inference_on_a_cluttered_batch():
    """16 cluttered frames with 5 cars each: every frame yields at least its 5 cars (the speed of this call is
    measured by benchmarks/bench_tiny_radar.py, not asserted here)."""
    model = build_detector(MODEL)
    infos_objs = [[('Sedan', 10.0 + 6 * k, (-1) ** k * 2.0, -0.2, 4.5, 1.8, 1.5, 0.1 * k) for k in range(5)]]
    batch = torch.from_numpy(np.stack([demo_data.render_radar_tensor(
        infos_objs[0], np.random.RandomState(s), clutter=True, sensor_noise=False) for s in range(16)]))
    out = model.simple_test(batch, [{}] * 16)
    assert len(out) == 16 and all(len(r['boxes_3d']) >= 5 for r in out)


def _gt(objs):
    boxes = [[o[1], o[2], o[3] - o[6] / 2, o[4], o[5], o[6], o[7]] for o in objs]
    labels = [0 if o[0] == 'Sedan' else -1 for o in objs]
    return boxes, labels


def test_training_steps_learn_sizes():
    model = build_detector(MODEL)
    objs = [('Sedan', 15.0, 0.0, -0.2, 4.9, 1.95, 1.65, 0.0), ('Sedan', 35.0, -3.0, -0.3, 4.9, 1.95, 1.65, 0.2),
            ('Bus or Truck', 55.0, 2.0, 0.4, 11.0, 2.5, 3.0, 0.0)]
    data = _batch([_tensor(objs), _tensor(objs[:1])], gts=[_gt(objs), _gt(objs[:1])])
    wrapped = MMDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        out = wrapped.train_step(data, optimizer)
        assert set(out) == {'loss', 'log_vars', 'num_samples'} and out['num_samples'] == 2
        optimizer.zero_grad()
        out['loss'].backward()
        assert all(p.grad is not None for p in model.parameters())
        optimizer.step()
        losses.append(float(out['loss']))
    assert losses[-1] < 0.5 * losses[0]
    l, w, h = model.log_sizes.exp()[0].tolist()
    assert abs(l - 4.9) < abs(4.5 - 4.9) and abs(h - 1.65) < abs(1.55 - 1.65)
    val = wrapped.val_step(data, None)
    assert 'loss' in val


def _ddp_worker(rank, world, port, queue):
    os.environ.update(MASTER_ADDR='127.0.0.1', MASTER_PORT=str(port))
    dist.init_process_group('gloo', rank=rank, world_size=world)
    torch.manual_seed(0)
    model = build_detector(MODEL)
    ddp = MMDistributedDataParallel(model, broadcast_buffers=False)
    objs = [('Sedan', 15.0 + 10 * rank, 0.0, -0.2, 4.9 - rank, 1.9, 1.6, 0.1 * rank)]
    data = _batch([_tensor(objs)], gts=[_gt(objs)])
    _, kwargs = scatter_kwargs((), data, [-1])  # CPU: unwrap DataContainers as MMDataParallel does
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    out = ddp.train_step(kwargs[0], optimizer)
    optimizer.zero_grad()
    out['loss'].backward()
    optimizer.step()
    queue.put((rank, model.log_sizes.detach().numpy().copy(), float(out['loss'])))
    dist.barrier()
    dist.destroy_process_group()


def test_distributed_train_step_syncs_gradients():
    ctx = mp.get_context('spawn')
    queue = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_ddp_worker, args=(r, 2, port, queue)) for r in range(2)]
    for p in procs:
        p.start()
    results = dict((r, (s, l)) for r, s, l in gather(queue, procs, len(procs)))
    assert results[0][1] != results[1][1]                       # different data per rank
    np.testing.assert_allclose(results[0][0], results[1][0])    # identical parameters after the step
    assert not np.allclose(results[0][0], np.log([[4.5, 1.85, 1.55], [10.0, 2.55, 3.15]]))
