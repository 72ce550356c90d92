#!/usr/bin/env python
"""Train a detector from a config, or only evaluate it: the standard mmdet3d/mmdet train flow plus the
kradar_plugin switches (``--eval-only``, ``--eval-first``, ``--eval-samples N``, ``--checkpoints``, ``--watch``).

    python tools/train.py CONFIG [--eval-only | --eval-first] [--eval-samples N] [mmdet3d/mmdet options]
    tools/dist_train.sh CONFIG GPUS [same options]

A shim: on mmcv-full 1.x it runs ``kradar_plugin.adapters.mmcv1.train``, on the OpenMMLab 2.0 stack (mmengine,
mmcv without ``mmcv.runner``) ``kradar_plugin.adapters.mmengine.train``, with the same flags.
"""
import importlib.util
import os
import os.path as osp
import sys


def _openmmlab2():
    """mmengine installed and mmcv without ``mmcv.runner``: the OpenMMLab 2.0 stack."""
    try:
        return importlib.util.find_spec('mmengine') is not None and importlib.util.find_spec('mmcv.runner') is None
    except (ImportError, ValueError):
        return False


if __name__ == '__main__':
    # the working directory first (a project's `custom_imports = ['projects.mmdet3d_plugin', ...]` must import
    # when the config loads, as mmdet3d's dist_train.sh arranges with its repository root), then this repository
    sys.path[:0] = [p for p in (os.getcwd(), osp.dirname(osp.dirname(osp.abspath(__file__)))) if p not in sys.path]
    if _openmmlab2():
        from kradar_plugin.adapters.mmengine.train import main
    else:
        from kradar_plugin.adapters.mmcv1.train import main
    sys.exit(main())
