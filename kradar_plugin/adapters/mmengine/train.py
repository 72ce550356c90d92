"""Train a detector from an mmengine config, or only evaluate it (OpenMMLab 2.0 stack): mmdet3d 1.x's
``tools/train.py`` plus the kradar_plugin switches.

    python -m kradar_plugin.adapters.mmengine.train CONFIG [--eval-only | --eval-first] [--eval-samples N]
        [--work-dir DIR] [--resume [CKPT]] [--amp] [--cfg-options k=v ...] [--launcher pytorch]
    python -m torch.distributed.run --nproc_per_node 2 -m kradar_plugin.adapters.mmengine.train CONFIG --launcher pytorch ...

The runner is built as ``EvalOnlyRunner`` around the config's own ``runner_type`` (``base_runner_type``), so
the evaluation guards apply in every mode; ``--eval-only`` evaluates the (loaded) model once through the
real training job and trains nothing, ``--eval-first`` evaluates once and then trains, ``--eval-samples N``
restricts every evaluation to the first N validation samples. Runs on CPU too (gloo). ``main`` is wrapped
with torchelastic's ``record``, so a crash shows the real traceback in the launcher's summary.
"""
import argparse
import logging
import os
import os.path as osp
import sys


def parse_args(argv=None):
    from mmengine.config import DictAction

    from kradar_plugin import runner_options
    parser = argparse.ArgumentParser(description='Train (or only evaluate) a detector (OpenMMLab 2.0)')
    parser.add_argument('config', help='train config file path')
    parser.add_argument('--work-dir', help='the dir to save logs and models')
    parser.add_argument('--amp', action='store_true', default=False,
                        help='enable automatic-mixed-precision training')
    parser.add_argument('--auto-scale-lr', action='store_true', help='enable automatically scaling LR')
    parser.add_argument('--resume', nargs='?', type=str, const='auto',
                        help='resume from this checkpoint, or (no value) from the latest in the work dir')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction,
                        help='override config settings, key=value; e.g. load_from=ckpt.pth')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none',
                        help='job launcher')
    parser.add_argument('--local_rank', '--local-rank', dest='local_rank', type=int, default=0)
    runner_options.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.checkpoints and args.watch:
        parser.error('--checkpoints and --watch are exclusive')
    if (args.checkpoints or args.watch) and args.eval_first:
        parser.error('--checkpoints/--watch sweep in eval-only mode: drop --eval-first')
    if args.checkpoints or args.watch:
        args.eval_only = True
    if 'LOCAL_RANK' not in os.environ:
        os.environ['LOCAL_RANK'] = str(args.local_rank)
    if args.eval_samples is not None and args.eval_samples <= 0:
        parser.error('--eval-samples must be a positive integer, got {}'.format(args.eval_samples))
    return args


def apply_eval_switch(cfg, args):
    """Build the runner as ``EvalOnlyRunner`` (guards always on; mode from the flags, else the config's
    ``eval_mode``, else 'off')."""
    runner_type = cfg.get('runner_type', None)
    if runner_type not in (None, 'Runner', 'EvalOnlyRunner'):
        cfg.base_runner_type = runner_type
    cfg.runner_type = 'EvalOnlyRunner'
    from kradar_plugin import runner_options
    given = runner_options.config_from_args(args)
    if 'eval_mode' not in given and 'eval_mode' not in cfg:
        cfg.eval_mode = 'only' if runner_type == 'EvalOnlyRunner' else 'off'
    cfg.update(given)
    if any(key in given for key in runner_options.SWEEP):
        cfg.load_from = None  # each checkpoint of the sweep is loaded in turn


def build_cfg(args):
    from mmengine.config import Config
    from mmengine.logging import print_log
    cfg = Config.fromfile(args.config)
    cfg.launcher = args.launcher
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get('work_dir', None) is None:
        cfg.work_dir = osp.join('./work_dirs', osp.splitext(osp.basename(args.config))[0])
    if args.amp:
        if cfg.optim_wrapper.type == 'AmpOptimWrapper':
            print_log('AMP training is already enabled in your config.', logger='current', level=logging.WARNING)
        else:
            cfg.optim_wrapper.type = 'AmpOptimWrapper'
            cfg.optim_wrapper.loss_scale = 'dynamic'
    if args.auto_scale_lr:
        if not ('auto_scale_lr' in cfg and 'enable' in cfg.auto_scale_lr
                and 'base_batch_size' in cfg.auto_scale_lr):
            raise RuntimeError('Can not find "auto_scale_lr" or "auto_scale_lr.enable" or '
                               '"auto_scale_lr.base_batch_size" in your configuration file.')
        cfg.auto_scale_lr.enable = True
    if args.resume == 'auto':
        cfg.resume = True
        cfg.load_from = None
    elif args.resume is not None:
        cfg.resume = True
        cfg.load_from = args.resume
    apply_eval_switch(cfg, args)
    return cfg


def _main(argv=None):
    # the working directory first: a project's custom_imports must import when the config loads
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    import kradar_plugin  # noqa: F401  (registers EvalOnlyRunner, EvalOnlyHook, KRadarMetric)
    from mmengine.registry import RUNNERS
    args = parse_args(argv)
    cfg = build_cfg(args)
    runner = RUNNERS.build(cfg)
    runner.train()


def main(argv=None):
    from torch.distributed.elastic.multiprocessing.errors import record
    return record(_main)(argv)


if __name__ == '__main__':
    main()
