"""Cost of the checks before the first evaluation, on this machine:

1. loading a checkpoint through the guard (read, key repair, report, JSON) vs mmcv's plain load_checkpoint,
   for a model of --params parameter elements saved from a wrapper ('module.' keys);
2. the preflight's per-loader measurements on a dataset of --samples samples: one epoch of sampler draws,
   pickling the dataset into a counting sink, one real fork worker probed for CUDA, one batch measured;
3. ``kradar-doctor --config``'s loader probe (2 gloo processes building the toy config's loaders).

    python benchmarks/bench_preflight.py [--params 25000000] [--samples 20000] [--repeat 3]
"""
import argparse
import functools
import logging
import os
import os.path as osp
import statistics
import sys
import tempfile
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
sys.path[:0] = [ROOT]


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_checkpoint(params, repeat):
    import torch
    import torch.nn as nn
    from mmcv.runner.checkpoint import load_checkpoint
    from kradar_plugin.adapters.mmcv1.checkpoint_loading import load_checked
    width = 1024
    layers = max(1, params // (width * width + width))
    model = nn.Sequential(*[nn.Linear(width, width) for _ in range(layers)])
    total = sum(p.numel() for p in model.parameters())
    logger = logging.getLogger('bench_preflight')
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    with tempfile.TemporaryDirectory() as tmp:
        path = osp.join(tmp, 'wrapped.pth')
        torch.save({'state_dict': dict(('module.' + k, v) for k, v in model.state_dict().items())}, path)
        load_checkpoint(model, path, map_location='cpu', logger=logger)  # warm the page cache first
        plain = timed(lambda: load_checkpoint(model, path, map_location='cpu', logger=logger), repeat)
        guarded = timed(lambda: load_checked(model, path, logger=logger, work_dir=tmp), repeat)
    print('checkpoint of %d parameter elements (%d tensors, %.0f MiB): mmcv load_checkpoint %.3f s, with the '
          'report %.3f s (+%.3f s)' % (total, 2 * layers, total * 4 / 2.0 ** 20, plain, guarded, guarded - plain))


def bench_loader(samples, repeat):
    from mmcv.parallel import collate
    from torch.utils.data import DataLoader, DistributedSampler
    from kradar_plugin.doctor import pitfalls as P
    from tests.adapters.mmcv1.fixture_pitfalls import ToyPipelineDataset
    ds = ToyPipelineDataset(num_samples=samples, pipeline=[dict(type='ToyScale', factor=1.0)])
    dl = DataLoader(ds, batch_size=4, sampler=DistributedSampler(ds, num_replicas=2, rank=0), num_workers=1,
                    collate_fn=functools.partial(collate, samples_per_gpu=4), multiprocessing_context='fork')
    rows = [('one epoch of sampler draws', lambda: P.sampler_draws(dl)),
            ('pickling dataset/collate/worker_init_fn', lambda: [P.find_unpicklable(o, n)
                                                                for n, o in P.worker_payload(dl)]),
            ('one fork worker probed for CUDA', lambda: P.probe_worker_cuda(dl)),
            ('one batch measured for /dev/shm', lambda: P.batch_nbytes(P.first_batch(dl)))]
    print('preflight measurements per loader, %d samples (%d pickled bytes):'
          % (samples, P.pickled_size(ds)))
    for name, fn in rows:
        print('  %-42s %.3f s' % (name, timed(fn, repeat)))


def bench_doctor_probe():
    from kradar_plugin.doctor.probes.loader_probe import run_loader_probe
    config = osp.join(ROOT, 'tests', 'adapters', 'mmcv1', 'configs', 'toy_pipeline.py')
    start = time.perf_counter()
    found = run_loader_probe(config, cwd=ROOT)
    elapsed = time.perf_counter() - start
    assert 'pitfalls' in found, found
    print('kradar-doctor --config loader probe (2 processes, toy config): %.1f s wall (one run; mostly the two '
          'interpreters importing torch/mmcv/mmdet3d)' % elapsed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--params', type=int, default=25000000)
    parser.add_argument('--samples', type=int, default=20000)
    parser.add_argument('--repeat', type=int, default=3)
    parser.add_argument('--skip-doctor', action='store_true')
    args = parser.parse_args()
    os.environ.setdefault('OMP_NUM_THREADS', '1')
    bench_checkpoint(args.params, args.repeat)
    bench_loader(args.samples, args.repeat)
    if not args.skip_doctor:
        bench_doctor_probe()


if __name__ == '__main__':
    main()
