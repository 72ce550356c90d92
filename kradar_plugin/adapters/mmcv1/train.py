"""Train a detector from an mmcv 1.x config, or only evaluate it: mmdet3d's (or mmdet's) ``tools/train.py`` flow
plus the kradar_plugin switches; ``tools/train.py`` is its shim, and the 2.0 counterpart is
``adapters/mmengine/train.py``.

    python tools/train.py CONFIG [--eval-only | --eval-first] [--eval-samples N] [mmdet3d/mmdet options]
    python -m kradar_plugin.adapters.mmcv1.train CONFIG [same options]
    tools/dist_train.sh CONFIG GPUS [same options]
    tools/dist_train.sh CONFIG GPUS --eval-only --checkpoints 'work_dirs/x/epoch_*.pth' [--eval-key KEY]
    tools/dist_train.sh CONFIG GPUS --eval-only --watch work_dirs/x [--watch-idle S] [--watch-final-epoch N]

Uses ``mmdet3d.apis.train_model`` when mmdet3d is importable, ``mmdet.apis.train_detector`` otherwise.
``--eval-only`` evaluates the (loaded) model once through the real training job -- runner, hooks, DDP,
data pipeline, distributed result collection -- and trains nothing; ``--eval-first`` evaluates once and
then trains; ``--eval-samples N`` restricts every evaluation to the first N validation samples;
``--checkpoints``/``--watch`` evaluate several checkpoints in one launch (a sweep: runner, model, DDP and
loaders built once; ``work_dir/sweep.json`` and ``sweep_ap.png`` at the end; exit code 0 only if every
checkpoint succeeded).
Runs on CPU too (gloo backend for multi-process runs). ``main`` is wrapped with torchelastic's ``record``
so that a crash shows the real traceback, with its rank, in the launcher's summary.
"""
import argparse
import copy
import importlib
import os
import os.path as osp
import sys
import time
import warnings

import mmcv
import torch
from mmcv import Config, DictAction
from mmcv.runner import get_dist_info, init_dist
from torch.distributed.elastic.multiprocessing.errors import record

import kradar_plugin  # noqa: F401  (registers the dataset, models, runner switch; CPU support)
from kradar_plugin import runner_options
from kradar_plugin.adapters.mmcv1 import EvalOnlyRunnerConstructor, normalize_dist_params
from kradar_plugin.distributed.failfast import wait_if_peer_failure

try:
    import mmdet3d  # noqa: F401
    HAS_MMDET3D = True
except ImportError:
    HAS_MMDET3D = False
if HAS_MMDET3D:  # mmdet3d's flow (an mmdet3d incompatible with this mmcv raises here, on purpose)
    from mmdet3d import __version__ as mmdet3d_version
    from mmdet3d.apis import train_model
    from mmdet3d.datasets import build_dataset
    from mmdet3d.models import build_model
    from mmdet3d.utils import collect_env, get_root_logger
else:
    from mmdet.apis import train_detector
    from mmdet.datasets import build_dataset
    from mmdet.models import build_detector as build_model
    from mmdet.utils import collect_env, get_root_logger
    mmdet3d_version = None
from mmdet import __version__ as mmdet_version
from mmdet.apis import set_random_seed
try:
    from mmdet.utils import setup_multi_processes  # (mmdet >= 2.20, as mmdet3d's train.py uses it)
except ImportError:  # mmdet 2.19 (EchoFusion's pin): the same settings from the plugin
    from kradar_plugin.adapters.mmcv1.multi_processes import setup_multi_processes
from kradar_plugin.adapters.mmcv1.dist_init import install_cpu_support

install_cpu_support()  # no-op with CUDA; on a CPU machine also covers mmdet3d's train functions imported above

OUR_CONSTRUCTOR = EvalOnlyRunnerConstructor.__name__


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Train (or only evaluate) a detector')
    parser.add_argument('config', help='train config file path')
    parser.add_argument('--work-dir', help='the dir to save logs and models')
    parser.add_argument('--resume-from', help='the checkpoint file to resume from')
    parser.add_argument('--auto-resume', action='store_true',
                        help='resume from the latest checkpoint in the work_dir automatically')
    parser.add_argument('--no-validate', action='store_true',
                        help='whether not to evaluate the checkpoint during training')
    group_gpus = parser.add_mutually_exclusive_group()
    group_gpus.add_argument('--gpus', type=int, help='(deprecated) number of gpus to use')
    group_gpus.add_argument('--gpu-ids', type=int, nargs='+', help='(deprecated) ids of gpus to use')
    group_gpus.add_argument('--gpu-id', type=int, default=0, help='id of gpu to use (non-distributed)')
    parser.add_argument('--seed', type=int, default=0, help='random seed')
    parser.add_argument('--diff-seed', action='store_true', help='different seed per rank')
    parser.add_argument('--deterministic', action='store_true',
                        help='whether to set deterministic options for CUDNN backend')
    parser.add_argument('--options', nargs='+', action=DictAction, help='(deprecated) use --cfg-options')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction,
                        help='override config settings, key=value; e.g. load_from=ckpt.pth')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm', 'mpi'], default='none',
                        help='job launcher')
    # torch < 2.0 launchers pass --local_rank, torch >= 2.0 ``launch`` passes --local-rank
    parser.add_argument('--local_rank', '--local-rank', dest='local_rank', type=int, default=0)
    parser.add_argument('--autoscale-lr', action='store_true',
                        help='automatically scale lr with the number of gpus')
    runner_options.add_arguments(parser)
    parser.add_argument('--no-doctor', action='store_true',
                        help='skip the environment quick checks at start')
    args = parser.parse_args(argv)
    if 'LOCAL_RANK' not in os.environ:
        os.environ['LOCAL_RANK'] = str(args.local_rank)
    if args.options and args.cfg_options:
        parser.error('--options and --cfg-options cannot be both specified')
    if args.options:
        warnings.warn('--options is deprecated in favor of --cfg-options')
        args.cfg_options = args.options
    if args.no_validate and (args.eval_only or args.eval_first or args.eval_samples):
        parser.error('--eval-only/--eval-first/--eval-samples need validation: drop --no-validate')
    if args.checkpoints and args.watch:
        parser.error('--checkpoints and --watch are exclusive')
    if (args.checkpoints or args.watch) and (args.eval_first or args.no_validate):
        parser.error('--checkpoints/--watch sweep in eval-only mode: drop --eval-first/--no-validate')
    if args.checkpoints or args.watch:
        args.eval_only = True
    if args.eval_samples is not None and args.eval_samples <= 0:
        parser.error('--eval-samples must be a positive integer, got {}'.format(args.eval_samples))
    return args


def import_plugin_dir(cfg, config_path):
    """EchoFusion/BEVFormer-style ``plugin=True, plugin_dir='projects/mmdet3d_plugin/'`` configs."""
    if not cfg.get('plugin', False):
        return
    plugin_dir = cfg.get('plugin_dir', None) or osp.dirname(config_path)
    module_path = osp.normpath(plugin_dir).replace(os.sep, '.').strip('.')
    importlib.import_module(module_path)


def apply_eval_switch(cfg, args):
    """Build the runner through EvalOnlyRunnerConstructor (guards always on; mode from the flags)."""
    runner = cfg.get('runner', None)
    if runner is None:
        runner = cfg.runner = mmcv.ConfigDict(type='EpochBasedRunner', max_epochs=cfg.total_epochs)
    constructor = runner.get('constructor', 'DefaultRunnerConstructor')
    if constructor != OUR_CONSTRUCTOR:
        runner['base_constructor'] = constructor
        runner['constructor'] = OUR_CONSTRUCTOR
        runner.setdefault('eval_mode', 'off')
    given = runner_options.config_from_args(args)
    runner.update(given)
    if any(key in given for key in runner_options.SWEEP) and cfg.get('load_from'):
        cfg.load_from = None  # each checkpoint of the sweep is loaded in turn


def doctor_quick_checks(args):
    """Rank 0: print the FAIL lines of the doctor's quick checks. Never stops the run."""
    if args.no_doctor or get_dist_info()[0] != 0:
        return
    try:
        from kradar_plugin.doctor import format_report, run_checks
    except ImportError:
        return
    try:
        report = format_report(run_checks(quick=True, config=args.config, train_script=__file__),
                               statuses=('FAIL',))
    except Exception as exc:  # the doctor must never be the reason a run does not start
        print('kradar-doctor quick checks could not run: {}: {}'.format(type(exc).__name__, exc),
              file=sys.stderr)
        return
    if report and report.strip():
        print(report, file=sys.stderr)
        sys.stderr.flush()


def get_device():
    try:
        from mmdet.utils import get_device as mmdet_get_device
        return mmdet_get_device()
    except ImportError:
        return 'cuda' if torch.cuda.is_available() else 'cpu'


@record
def main(argv=None):
    try:
        run(argv)
    except Exception as exc:
        # a rank that only lost a peer must not be reported as the root cause of the job's failure
        wait_if_peer_failure(exc)
        raise


def run(argv=None):
    args = parse_args(argv)
    cfg = Config.fromfile(args.config)
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    import_plugin_dir(cfg, args.config)
    apply_eval_switch(cfg, args)

    # the config's mp_start_method / opencv_num_threads / OMP threads, as mmdet3d's own train.py (before
    # init_dist, which would otherwise pick 'spawn' for the DataLoader workers)
    setup_multi_processes(cfg)
    if cfg.get('cudnn_benchmark', False):
        torch.backends.cudnn.benchmark = True
    # work_dir: CLI > config > ./work_dirs/<config name>
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get('work_dir', None) is None:
        cfg.work_dir = osp.join('./work_dirs', osp.splitext(osp.basename(args.config))[0])
    if args.resume_from is not None:
        cfg.resume_from = args.resume_from
    cfg.auto_resume = args.auto_resume
    if args.gpus is not None:
        cfg.gpu_ids = range(1)
    elif args.gpu_ids is not None:
        cfg.gpu_ids = args.gpu_ids[0:1]
    else:
        cfg.gpu_ids = [args.gpu_id]
    if args.autoscale_lr:
        cfg.optimizer['lr'] = cfg.optimizer['lr'] * len(cfg.gpu_ids) / 8

    # distributed environment first: the logger depends on the rank
    if args.launcher == 'none':
        distributed = False
    else:
        distributed = True
        init_dist(args.launcher, **normalize_dist_params(cfg.get('dist_params', {})))
        _, world_size = get_dist_info()
        cfg.gpu_ids = range(world_size)
    doctor_quick_checks(args)

    mmcv.mkdir_or_exist(osp.abspath(cfg.work_dir))
    cfg.dump(osp.join(cfg.work_dir, osp.basename(args.config)))
    timestamp = time.strftime('%Y%m%d_%H%M%S', time.localtime())
    log_file = osp.join(cfg.work_dir, '{}.log'.format(timestamp))
    # name='mmdet' as mmdet3d's own tools/train.py: mmdet's runner, hooks and the datasets' evaluate log to the
    # 'mmdet' logger, and only its handlers write work_dir/<timestamp>.log (mmdet3d's default name would
    # leave the runner's lines and the AP table out of the log file)
    logger_name = 'mmseg' if HAS_MMDET3D and cfg.model.type in ('EncoderDecoder3D',) else 'mmdet'
    logger = (get_root_logger(log_file=log_file, log_level=cfg.log_level, name=logger_name) if HAS_MMDET3D
              else get_root_logger(log_file=log_file, log_level=cfg.log_level))

    meta = dict()
    env_info = '\n'.join('{}: {}'.format(k, v) for k, v in collect_env().items())
    dash_line = '-' * 60 + '\n'
    logger.info('Environment info:\n' + dash_line + env_info + '\n' + dash_line)
    meta['env_info'] = env_info
    meta['config'] = cfg.pretty_text
    logger.info('Distributed training: {}'.format(distributed))
    logger.info('Config:\n{}'.format(cfg.pretty_text))

    cfg.device = get_device()
    seed = args.seed + get_dist_info()[0] if args.diff_seed else args.seed
    logger.info('Set random seed to {}, deterministic: {}'.format(seed, args.deterministic))
    set_random_seed(seed, deterministic=args.deterministic)
    cfg.seed = seed
    meta['seed'] = seed
    meta['exp_name'] = osp.basename(args.config)

    model = build_model(cfg.model, train_cfg=cfg.get('train_cfg'), test_cfg=cfg.get('test_cfg'))
    model.init_weights()
    logger.info('Model:\n{}'.format(model))

    datasets = [build_dataset(cfg.data.train)]
    if len(cfg.workflow) == 2:
        val_dataset = copy.deepcopy(cfg.data.val)
        if 'dataset' in cfg.data.train:
            val_dataset.pipeline = cfg.data.train.dataset.pipeline
        else:
            val_dataset.pipeline = cfg.data.train.pipeline
        val_dataset.test_mode = False
        datasets.append(build_dataset(val_dataset))
    classes = datasets[0].CLASSES
    if cfg.checkpoint_config is not None:
        cfg.checkpoint_config.meta = dict(mmdet_version=mmdet_version, CLASSES=classes)
        if mmdet3d_version is not None:
            cfg.checkpoint_config.meta['mmdet3d_version'] = mmdet3d_version
    model.CLASSES = classes
    if HAS_MMDET3D:
        train_model(model, datasets, cfg, distributed=distributed, validate=(not args.no_validate),
                    timestamp=timestamp, meta=meta)
    else:
        train_detector(model, datasets, cfg, distributed=distributed, validate=(not args.no_validate),
                       timestamp=timestamp, meta=meta)


if __name__ == '__main__':
    main()
