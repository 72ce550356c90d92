#!/usr/bin/env python
"""Generate the small deterministic K-Radar-format demo dataset (EchoFusion info pickles + BEV tensors).

    python tools/create_demo_data.py --out data/demo [--frames N] [--train-frames M] [--seed S] [--force]

Skips the work when DIR already holds data generated with the same parameters.
"""
import argparse
import importlib.util
import os.path as osp
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


def _demo_data_module():
    """Load kradar_plugin/datasets/demo_data.py by path: it needs numpy only, while importing the package
    would also register the mmcv/mmdet adapters (seconds, and torch)."""
    path = osp.join(ROOT, 'kradar_plugin', 'datasets', 'demo_data.py')
    spec = importlib.util.spec_from_file_location('kradar_demo_data', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out', required=True, help='output directory (data_root of the demo configs)')
    parser.add_argument('--frames', type=int, default=100, help='validation frames (default 100)')
    parser.add_argument('--train-frames', type=int, default=None, help='training frames (default frames // 2)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--force', action='store_true', help='regenerate even if up to date')
    args = parser.parse_args(argv)
    if args.frames < 1:
        parser.error('--frames must be >= 1')
    start = time.time()
    out = _demo_data_module().generate_demo_dataset(args.out, frames=args.frames, train_frames=args.train_frames, seed=args.seed,
                                force=args.force)
    state = 'generated' if out['generated'] else 'up to date'
    print('demo data {} in {:.1f} s: {} and {}'.format(state, time.time() - start, out['val'], out['train']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
