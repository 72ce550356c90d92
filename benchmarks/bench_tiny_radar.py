"""Inference time of the demo detector (TinyRadarPeakDetector.simple_test) per frame, on cluttered demo
frames with 5 cars each, and against peers measured in the same process on the same frames:

- the same model on batches of 1 (batching overhead),
- the numpy peak search alone (``find_peaks`` on each frame's power channel): the part of inference that is
  not per-peak moment/box work.

    python benchmarks/bench_tiny_radar.py [--frames 16] [--repeat 7]

Needs torch, mmcv-full and mmdet (the full .venv). Prints the medians in ms per frame and the ratios.
Figures depend on the machine and its load, which is why they are measured here and not asserted in a test.
"""
import argparse
import time

import numpy as np


def median_seconds(fn, repeat):
    fn()  # warm-up (first call allocates and fills caches)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--frames', type=int, default=16)
    parser.add_argument('--repeat', type=int, default=7)
    args = parser.parse_args(argv)

    import torch
    import kradar_plugin  # noqa: F401  (registers the detector)
    from kradar_plugin.demo import data as demo_data
    from kradar_plugin.demo.tiny_radar import find_peaks
    from mmdet.models import build_detector

    model = build_detector(dict(type='TinyRadarPeakDetector', classes=['Sedan'],
                                grid={'x_min': 0.0, 'y_min': -16.0, 'cell': 0.5}))
    objects = [('Sedan', 10.0 + 6 * k, (-1) ** k * 2.0, -0.2, 4.5, 1.8, 1.5, 0.1 * k) for k in range(5)]
    frames = np.stack([demo_data.render_radar_tensor(objects, np.random.RandomState(s), clutter=True,
                                                     sensor_noise=False) for s in range(args.frames)])
    batch = torch.from_numpy(frames)
    metas = [{}] * args.frames
    out = model.simple_test(batch, metas)
    found = sum(len(r['boxes_3d']) for r in out)

    batched = median_seconds(lambda: model.simple_test(batch, metas), args.repeat) / args.frames
    single = median_seconds(lambda: [model.simple_test(batch[i:i + 1], [{}]) for i in range(args.frames)],
                            args.repeat) / args.frames
    power = frames[:, model.power_channel]
    peaks = median_seconds(lambda: [find_peaks(p, model.score_thr, model.max_num) for p in power],
                           args.repeat) / args.frames

    print('TinyRadarPeakDetector, %d frames %s, %d boxes found (%d cars placed), torch %s, %d threads'
          % (args.frames, 'x'.join(str(d) for d in frames.shape[1:]), found, 5 * args.frames, torch.__version__,
             torch.get_num_threads()))
    print('simple_test, batch %-3d %8.2f ms/frame' % (args.frames, batched * 1e3))
    print('simple_test, batch 1   %8.2f ms/frame   (batch 1 / batch %d: %.2fx)' % (single * 1e3, args.frames,
                                                                                 single / batched))
    print('find_peaks alone       %8.2f ms/frame   (share of batched inference: %.0f%%)'
          % (peaks * 1e3, 100.0 * peaks / batched))


if __name__ == '__main__':
    main()
