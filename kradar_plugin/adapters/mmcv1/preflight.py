"""The eval-only preflight: the distributed pitfalls of ``kradar_plugin.doctor.pitfalls``, checked on the
job's own data loaders (and model, when asked) in ``EvalOnlyHook.before_run``, before the first
evaluation.

Every rank measures what it can see (its sampler's draws, whether its loaders' payload pickles, what one
of its workers does with CUDA; the local rank 0 of each node also the leftovers and /dev/shm; rank 0 probes
the model for parameters without gradient when ``probe_model`` is on), the findings are shared with
``all_gather_object``, and every rank then holds the same list: rank 0 logs it (OK/WARN/FAIL with the fix)
and, when anything FAILed, EVERY rank raises ``PreflightError`` with the same message, so no rank is left
waiting in a collective.
"""
import os

from kradar_plugin.distributed import run_context
from kradar_plugin.doctor import pitfalls as P
from kradar_plugin.doctor.report import format_report
from kradar_plugin.facts.result import CheckResult
from .eval_guard import uses_standard_collection


class PreflightError(RuntimeError):
    """A distributed pitfall that would break or falsify the run."""


def _dist():
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist, dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    return None, 0, 1


def job_loaders(runner, eval_hooks):
    """[(name, DataLoader)]: the training loaders ``runner.run`` received (the run context's
    ``data_loaders``), then each eval hook's loader."""
    loaders = []
    train = [dl for dl in (run_context.current().data_loaders or []) if hasattr(dl, 'dataset')]
    for i, dl in enumerate(train):
        loaders.append(('train' if len(train) == 1 else 'train[%d]' % i, dl))
    for i, hook in enumerate(eval_hooks):
        loaders.append(('val' if len(eval_hooks) == 1 else 'val[%d]' % i, hook.dataloader))
    return loaders


def _scatter_for(model, batch):
    """``batch`` (DataContainers) scattered the way MMDataParallel/MMDistributedDataParallel would."""
    from mmcv.parallel import scatter_kwargs
    param = next(model.parameters(), None)
    device = -1 if param is None or param.device.type != 'cuda' else param.device.index
    inputs, _ = scatter_kwargs((batch,), {}, [device])
    return inputs[0][0]


def _could_not(name, what, exc):
    """A check that raised: WARN, so that this rank still reaches the collective and the run shows its own
    error where it really happens."""
    return CheckResult(name, 'WARN', '%s could not be checked: %s: %s' % (what, type(exc).__name__, exc),
                       'the preflight skipped it; runner.preflight=False silences the check')


def _loader_checks(name, loader, results):
    method = P.start_method(loader)
    pickled = [(label, P.find_unpicklable(obj, label)) for label, obj in P.worker_payload(loader)] \
        if getattr(loader, 'num_workers', 0) else []
    results.append(P.judge_pickling(name, loader, method, pickled))
    if method in P.SPAWN_METHODS and any(f is not None for _, f in pickled):
        results.append(P.judge_worker_cuda(name, None, method, skipped='its payload does not pickle'))
        return
    try:
        state = P.probe_worker_cuda(loader)
    except Exception as exc:  # noqa: BLE001 - the dataset's own error: the loader will meet it in the run
        results.append(P.probe_failed(name, method, exc))
        return
    results.append(P.judge_worker_cuda(name, state, method))


def _local_checks(runner, loaders, world, rank, probe_model):
    """This rank's findings (as dicts), its sampler draws and loader sizes. Never raises: a check that fails
    to run becomes a WARN, so every rank reaches the all_gather."""
    from kradar_plugin.distributed.checkpoint_report import unwrap_model
    results, draws, sizes = [], {}, {}
    local_rank = int(os.environ.get('LOCAL_RANK', rank))
    for name, loader in loaders:
        try:
            draws[name] = P.sampler_draws(loader)
            sizes[name] = (len(loader.dataset), P.describe_sampler(P.sampler_of(loader)),
                           P.loader_batch_size(loader))
        except Exception as exc:  # noqa: BLE001
            draws[name], sizes[name] = None, None
            results.append(_could_not('sampler', '%s: the sampler' % name, exc))
        try:
            _loader_checks(name, loader, results)
        except Exception as exc:  # noqa: BLE001
            results.append(_could_not('worker-pickle', '%s: the workers' % name, exc))
    model = runner.model
    try:
        import torch
        results.append(P.judge_ddp_view(torch.__version__, getattr(model, 'find_unused_parameters', None),
                                        bool(getattr(model, 'static_graph', False)), world > 1))
    except Exception as exc:  # noqa: BLE001
        results.append(_could_not('ddp-inplace-view', 'the DDP wrapper', exc))
    train = [(n, dl) for n, dl in loaders if n.startswith('train')]
    if probe_model and rank == 0 and train:
        try:
            module = unwrap_model(model)
            batch = P.first_batch(train[0][1])
            unused = P.probe_unused_parameters(module, _scatter_for(module, batch))
            total = sum(1 for p in module.parameters() if p.requires_grad)
            results.append(P.judge_unused(unused, getattr(model, 'find_unused_parameters', False), world > 1,
                                          total))
        except Exception as exc:  # noqa: BLE001
            results.append(_could_not('unused-params', 'one forward/backward of the model', exc))
    if local_rank == 0:
        try:
            results.append(P.judge_leftovers(P.probe_leftovers()))
        except Exception as exc:  # noqa: BLE001
            results.append(_could_not('leftovers', '/proc', exc))
        try:
            demands = []
            for name, loader in loaders:
                nbytes = P.batch_nbytes(P.first_batch(loader)) if getattr(loader, 'num_workers', 0) else 0
                demands.append(P.loader_shm_demand(name, loader, nbytes))
            total, free = P.shm_space()
            per_node = int(os.environ.get('LOCAL_WORLD_SIZE', world))
            results.append(P.judge_shm_batch(demands, total, free, per_node))
        except Exception as exc:  # noqa: BLE001
            results.append(_could_not('shm-batch', 'one batch', exc))
    return results, draws, sizes   # CheckResults pickle as they are (all_gather_object)


def _merge(gathered):
    """One list from every rank's findings: identical findings once, differing ones tagged with the rank."""
    merged, ranks_of = [], {}
    for rank, (items, _, _) in enumerate(gathered):
        for item in items:
            key = (item.name, item.status, item.reason)
            if key not in ranks_of:
                ranks_of[key] = set()
                merged.append(item)
            ranks_of[key].add(rank)
    world = len(gathered)
    out = []
    for item in merged:
        ranks = ranks_of[(item.name, item.status, item.reason)]
        if world > 1 and len(ranks) < world and item.status != 'OK':
            item = item._replace(reason='[rank %s] %s' % (','.join(str(r) for r in sorted(ranks)), item.reason))
        out.append(item)
    return out


def run_preflight(runner, eval_hooks, probe_model=False):
    """Collective (every rank calls it). Returns the CheckResults; raises PreflightError on every rank when
    any check FAILed."""
    dist, rank, world = _dist()
    loaders = job_loaders(runner, eval_hooks)
    local = _local_checks(runner, loaders, world, rank, probe_model)
    if dist is not None and world > 1:
        gathered = [None] * world
        dist.all_gather_object(gathered, local)
    else:
        gathered = [local]
    results = []
    standard = dict(('val' if len(eval_hooks) == 1 else 'val[%d]' % i, uses_standard_collection(h))
                    for i, h in enumerate(eval_hooks))
    for name, _ in loaders:
        if any(g[2][name] is None for g in gathered):
            continue  # a rank could not draw: its WARN is in the merged findings
        size, text, batch = gathered[0][2][name]
        rank_draws = [g[1][name] for g in gathered]
        if standard.get(name):
            results.append(P.judge_val_sampler(name, rank_draws, size, text))
        else:
            results.append(P.judge_sampler(name, rank_draws, size, text, batch))
    results += _merge(gathered)
    order = dict((n, i) for i, n in enumerate(P.NAMES))
    results.sort(key=lambda r: order.get(r.name, len(order)))
    text = format_report(results).replace('kradar-doctor:', 'kradar_plugin preflight:')
    if rank == 0:
        runner.logger.info('kradar_plugin preflight (%d rank(s)):\n%s', world, text)
    failed = [r for r in results if r.status == 'FAIL']
    if failed:
        from kradar_plugin.distributed.failfast import rank_tag
        raise PreflightError('{} kradar_plugin preflight: {} check(s) FAILED before the first evaluation:\n{}\n'
                             '(runner.preflight=False or KRADAR_PREFLIGHT=0 skips these checks)'.format(
                                 rank_tag(), len(failed),
                                 '\n'.join(format_report(failed).splitlines()[:-1])))
    return results
