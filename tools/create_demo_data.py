#!/usr/bin/env python
"""Generate the small deterministic K-Radar-format demo dataset (EchoFusion info pickles + BEV tensors).

    python tools/create_demo_data.py --out data/demo [--frames N] [--train-frames M] [--seed S] [--force]
    python tools/create_demo_data.py --out DIR --kradar-tree ...   # K-Radar's own files; then kradar-create-data

Skips the work when DIR already holds data generated with the same parameters.
"""
import argparse
import importlib.util
import os
import os.path as osp
import sys
import time

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


def _demo_data_module():
    """Load kradar_plugin/demo/data.py by path: it needs numpy only, while importing the package
    would also register the mmcv/mmdet adapters (seconds, and torch)."""
    path = osp.join(ROOT, 'kradar_plugin', 'demo', 'data.py')
    spec = importlib.util.spec_from_file_location('kradar_demo_data', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _demo_tree_module():
    """kradar_plugin/demo/tree.py (numpy only) with the package's registration off."""
    os.environ.setdefault('KRADAR_PLUGIN_REGISTER', '0')
    sys.path.insert(0, ROOT)
    from kradar_plugin.demo import tree as demo_tree
    return demo_tree


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--out', required=True, help='output directory (data_root of the demo configs)')
    parser.add_argument('--frames', type=int, default=100, help='validation frames (default 100)')
    parser.add_argument('--train-frames', type=int, default=None, help='training frames (default frames // 2)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--force', action='store_true', help='regenerate even if up to date')
    parser.add_argument('--kradar-tree', action='store_true',
                        help="write the frames as a K-Radar dataset tree in K-Radar's own formats instead (labels "
                             "v1.0/v1.1/v2.0/v2.1, calibration, descriptions, split/ and ImageSets/, the BEV radar "
                             "tensors); kradar-create-data then makes the infos")
    args = parser.parse_args(argv)
    if args.frames < 1:
        parser.error('--frames must be >= 1')
    start = time.time()
    if args.kradar_tree:
        out = _demo_tree_module().generate_tree(args.out, frames=args.frames, train_frames=args.train_frames,
                                                seed=args.seed, force=args.force)
        print('demo K-Radar tree {} in {:.1f} s: {} (labels v1.0 in <seq>/info_label, revised labels in {}, '
              'splits in {} and {})'.format('generated' if out['generated'] else 'up to date', time.time() - start,
                                            out['root'], out['labels_dir'], out['split_dir'], out['imagesets']))
        return 0
    out = _demo_data_module().generate_demo_dataset(args.out, frames=args.frames, train_frames=args.train_frames, seed=args.seed,
                                force=args.force)
    state = 'generated' if out['generated'] else 'up to date'
    print('demo data {} in {:.1f} s: {} and {}'.format(state, time.time() - start, out['val'], out['train']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
