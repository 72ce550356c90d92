"""``kradar-doctor --config``: build the config's datasets and loaders as a multi-process training job does --
in a real ``world_size``-process gloo group, through the framework's own ``build_dataset``/``build_dataloader``
(mmdet3d's ``train_detector`` flow when mmdet3d imports, mmdet's otherwise, looked up at call time) -- and
judge the distributed pitfalls (``pitfalls``) on them. With ``probe_model`` rank 0 also runs one CPU
forward/backward of the model on one training batch. The CUDA tracer is in before the config's modules are
imported. The workers' start method is the config's ``mp_start_method`` (default 'fork'), as mmdet's
``tools/train.py`` sets it; a train script that does not gets mmcv ``init_dist``'s 'spawn' (``start_method``).

    python -m kradar_plugin.doctor.probes.loader_probe CONFIG --rank R --world-size W --port P [--probe-model]

is one rank; ``run_loader_probe`` starts them and returns rank 0's findings.
"""
import argparse
import copy
import importlib
import json
import os
import os.path as osp
import socket
import subprocess
import sys
import tempfile

from ...facts.result import CheckResult

MARK = 'KRADAR_LOADER_PROBE '
DEFAULT_WORLD = 2


def _free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_loader_probe(config, world_size=DEFAULT_WORLD, probe_model=False, python=None, timeout=600, cwd=None,
                     start_method=None):
    """{'pitfalls': [CheckResult], 'loader-demands': [...], 'loader-flow', 'loader-world-size'} from rank 0,
    or {'loader-probe-error': text} when the ranks failed."""
    cwd = cwd or os.getcwd()
    port = _free_port()
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(p for p in (cwd, env.get('PYTHONPATH', '')) if p)
    env.setdefault('OMP_NUM_THREADS', '1')
    for key in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'MASTER_ADDR', 'MASTER_PORT'):
        env.pop(key, None)
    outputs, procs = [], []
    try:
        for rank in range(world_size):
            out = tempfile.TemporaryFile(mode='w+')
            cmd = [python or sys.executable, '-m', 'kradar_plugin.doctor.probes.loader_probe', osp.abspath(config),
                   '--rank', str(rank), '--world-size', str(world_size), '--port', str(port)] + \
                ['--probe-model'] * bool(probe_model) + (['--start-method', start_method] if start_method else [])
            procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                          universal_newlines=True))
            outputs.append(out)
        codes = []
        for proc in procs:
            try:
                codes.append(proc.wait(timeout=timeout))
            except subprocess.TimeoutExpired:
                for p in procs:
                    if p.poll() is None:
                        p.kill()
                        p.wait()
                return {'loader-probe-error': 'building the loaders of %s took longer than %d s' % (config, timeout)}
        texts = []
        for out in outputs:
            out.seek(0)
            texts.append(out.read())
    finally:
        for out in outputs:
            out.close()
    for line in texts[0].splitlines():
        if line.startswith(MARK):
            found = json.loads(line[len(MARK):])
            found['pitfalls'] = [CheckResult.from_dict(d) for d in found['pitfalls']]
            return found
    rank = next((r for r, c in enumerate(codes) if c != 0), 0)
    tail = [line for line in texts[rank].splitlines() if line.strip()]
    errors = [line for line in tail if 'Error' in line or 'error' in line]
    return {'loader-probe-error': 'rank %d exited with %s: %s' % (rank, codes[rank], (errors or tail or
                                                                                  ['no output'])[-1][:400])}


# ------------------------------------------------------------------------------------------ one rank
def _import_plugin_dir(cfg, config_path):
    """EchoFusion/BEVFormer-style ``plugin=True, plugin_dir='projects/mmdet3d_plugin/'`` configs."""
    if not cfg.get('plugin', False):
        return
    plugin_dir = cfg.get('plugin_dir', None) or osp.dirname(config_path)
    importlib.import_module(osp.normpath(plugin_dir).replace(os.sep, '.').strip('.'))


def _flow():
    """('mmdet3d', module) when mmdet3d's own train flow (1.0.0rc: ``build_mmdet_dataloader``) is importable;
    ('mmdet3d-datasets', mmdet's train module) for mmdet3d <= 0.17, whose ``train_model`` hands detectors to
    mmdet's ``train_detector`` (mmdet3d's datasets, mmdet's loaders); else ('mmdet', module)."""
    try:
        module = importlib.import_module('mmdet3d.apis.train')
    except Exception:  # noqa: BLE001 - mmdet3d absent or broken: mmdet's flow
        return 'mmdet', importlib.import_module('mmdet.apis.train')
    if hasattr(module, 'build_mmdet_dataloader'):
        return 'mmdet3d', module
    return 'mmdet3d-datasets', importlib.import_module('mmdet.apis.train')


def build_loaders(cfg, world_size):
    """[(name, DataLoader)] for data.train and data.val, built like the training function does."""
    flow, module = _flow()
    if flow.startswith('mmdet3d'):
        from mmdet3d.datasets import build_dataset
    else:
        from mmdet.datasets import build_dataset
    cfg = copy.deepcopy(cfg)
    runner_type = cfg.runner['type'] if 'runner' in cfg else 'EpochBasedRunner'
    seed = cfg.get('seed', None)
    train = build_dataset(cfg.data.train)
    if flow == 'mmdet3d':
        builder = getattr(module, 'build_mmdet_dataloader')
        train_loader = builder(train, cfg.data.samples_per_gpu, cfg.data.workers_per_gpu, num_gpus=world_size,
                               dist=True, seed=seed, runner_type=runner_type,
                               persistent_workers=cfg.data.get('persistent_workers', False))
        val_per_gpu = cfg.data.val.pop('samples_per_gpu', 1)
        val = build_dataset(cfg.data.val, dict(test_mode=True))
        val_loader = builder(val, samples_per_gpu=val_per_gpu, workers_per_gpu=cfg.data.workers_per_gpu, dist=True,
                             shuffle=False)
    else:
        try:
            from mmdet.utils import compat_cfg  # mmdet >= 2.24: per-loader settings in data.*_dataloader
        except ImportError:  # mmdet < 2.24 (EchoFusion's 2.19): data.samples_per_gpu / workers_per_gpu
            compat_cfg = None
        builder = getattr(module, 'build_dataloader')
        train_args = dict(samples_per_gpu=2, workers_per_gpu=2, num_gpus=world_size, dist=True, seed=seed,
                          runner_type=runner_type, persistent_workers=False)
        if compat_cfg is not None:
            cfg = compat_cfg(cfg)
        else:
            train_args.update(samples_per_gpu=cfg.data.samples_per_gpu, workers_per_gpu=cfg.data.workers_per_gpu,
                              persistent_workers=cfg.data.get('persistent_workers', False))
            cfg.data.setdefault('val_dataloader', dict(workers_per_gpu=cfg.data.workers_per_gpu))
        train_args.update(cfg.data.get('train_dataloader', {}))
        train_loader = builder(train, **train_args)
        val_args = dict(samples_per_gpu=1, workers_per_gpu=2, dist=True, shuffle=False, persistent_workers=False)
        val_args.update(cfg.data.get('val_dataloader', {}))
        val = build_dataset(cfg.data.val, dict(test_mode=True))
        val_loader = builder(val, **val_args)
    return flow, [('train', train_loader), ('val', val_loader)]


def build_model(cfg):
    try:
        from mmdet3d.models import build_model as build
    except Exception:  # noqa: BLE001 - mmdet's builder without mmdet3d
        from mmdet.models import build_detector as build
    model = build(cfg.model, train_cfg=cfg.get('train_cfg'), test_cfg=cfg.get('test_cfg'))
    model.init_weights()
    return model


def probe_rank(config, rank, world_size, port, probe_model=False, start_method=None):
    """One rank of the probe: returns the findings (rank 0) or None."""
    sys.path[:0] = [p for p in (os.getcwd(),) if p not in sys.path]
    from .. import pitfalls as P
    P.install_cuda_tracer()
    import datetime

    import torch
    import torch.distributed as dist
    dist.init_process_group('gloo', init_method='tcp://127.0.0.1:%d' % port, rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=600))
    from mmcv import Config
    cfg = Config.fromfile(config)
    _import_plugin_dir(cfg, config)
    import_state = P.cuda_state()
    torch.multiprocessing.set_start_method(start_method or cfg.get('mp_start_method', 'fork'), force=True)
    flow, loaders = build_loaders(cfg, world_size)
    local = {'draws': {}, 'results': []}
    for name, loader in loaders:
        local['draws'][name] = P.sampler_draws(loader)
        method = P.start_method(loader)
        pickled = [(label, P.find_unpicklable(obj, label)) for label, obj in P.worker_payload(loader)] \
            if loader.num_workers else []
        local['results'].append(P.judge_pickling(name, loader, method, pickled))
        if method in P.SPAWN_METHODS and any(f is not None for _, f in pickled):
            local['results'].append(P.judge_worker_cuda(name, None, method, skipped='its payload does not pickle'))
        else:
            try:
                local['results'].append(P.judge_worker_cuda(name, P.probe_worker_cuda(loader), method))
            except Exception as exc:  # noqa: BLE001 - the dataset's own error: the run meets it too
                local['results'].append(P.probe_failed(name, method, exc))
    gathered = [None] * world_size
    dist.all_gather_object(gathered, local['draws'])
    if rank != 0:
        dist.barrier()
        return None
    results = []
    for name, loader in loaders:
        text = P.describe_sampler(P.sampler_of(loader))
        draws = [g[name] for g in gathered]
        if name == 'val':
            results.append(P.judge_val_sampler(name, draws, len(loader.dataset), text))
        else:
            results.append(P.judge_sampler(name, draws, len(loader.dataset), text, P.loader_batch_size(loader)))
    results += local['results']
    results.append(P.judge_import_cuda(import_state))
    demands = []
    batches = {}
    for name, loader in loaders:
        batches[name] = P.first_batch(loader)
        demands.append(P.loader_shm_demand(name, loader, P.batch_nbytes(batches[name])))
    if probe_model:
        from mmcv.parallel import scatter_kwargs
        model = build_model(cfg)
        inputs, _ = scatter_kwargs((batches['train'],), {}, [-1])
        unused = P.probe_unused_parameters(model, inputs[0][0])
        total_params = sum(1 for p in model.parameters() if p.requires_grad)
        results.append(P.judge_unused(unused, bool(cfg.get('find_unused_parameters', False)), True, total_params))
    dist.barrier()
    return {'pitfalls': [r.to_dict() for r in results], 'loader-demands': demands, 'loader-flow': flow,
            'loader-world-size': world_size}


def main(argv=None):
    parser = argparse.ArgumentParser(description='one rank of the kradar-doctor loader probe')
    parser.add_argument('config')
    parser.add_argument('--rank', type=int, required=True)
    parser.add_argument('--world-size', type=int, required=True)
    parser.add_argument('--port', type=int, required=True)
    parser.add_argument('--probe-model', action='store_true')
    parser.add_argument('--start-method', choices=('fork', 'spawn', 'forkserver'))
    args = parser.parse_args(argv)
    found = probe_rank(args.config, args.rank, args.world_size, args.port, args.probe_model, args.start_method)
    if found is not None:
        sys.stdout.write(MARK + json.dumps(found) + '\n')
        sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
