"""The distributed-training pitfalls, judged on the real data loaders (and the model, when asked).

Shared by ``kradar-doctor --config`` (``loader_probe`` builds the loaders in a real 2-process gloo group) and
the eval-only preflight (``kradar_plugin.runner.preflight``, on the job's own loaders before the first
evaluation). Each ``judge_*`` function is pure and returns one ``CheckResult`` (OK/WARN/FAIL with the fix);
each ``probe_*`` function measures one fact on a live object. torch is imported inside the functions that
need it, so importing this module stays cheap.

Checks (names as in the report):

- ``sampler``: a sampler that is not rank-aware (not a ``DistributedSampler``, or one that ignores
  ``rank``/``num_replicas``) makes every rank see the whole dataset: the per-rank index draws of one epoch
  may share at most the ``world - 1`` padding indices of ``DistributedSampler``.
- ``worker-pickle``: with ``num_workers > 0`` and the spawn/forkserver start method the dataset (with its
  pipeline), ``collate_fn`` and ``worker_init_fn`` are pickled into each worker; a lambda or local function
  anywhere in them fails there. The path of the first unpicklable object is named.
- ``worker-cuda`` / ``import-cuda``: CUDA initialised in a DataLoader worker (or while importing the
  config's modules, which spawn workers repeat): every worker then creates a context on GPU 0. A worker is
  probed for ``torch.cuda.is_initialized()``, and every attempt to initialise CUDA (``torch.cuda._lazy_init``,
  what ``.cuda()`` and ``device='cuda'`` call) is recorded with its call site, so the attempt is seen even
  on a machine without a GPU, where it fails.
- ``ddp-inplace-view``: torch 1.10.x runs DDP outputs through ``_DDPSink``, which returns views when
  ``find_unused_parameters=True`` (or ``static_graph``): an in-place op on an output fails with "Output 0 of
  ... is a view and is being modified inplace" (pytorch#61982; fixed in 1.11 by pytorch#66015).
- ``unused-params``: parameters without a gradient after one forward/backward with
  ``find_unused_parameters=False`` (DDP: "Expected to have finished reduction in the prior iteration"),
  and the reverse, ``find_unused_parameters=True`` with none unused (a traversal of the graph every step).
- ``leftovers``: training processes, ``torch_shm_manager`` daemons and ``/dev/shm/torch_*`` segments of
  earlier runs still alive.
- ``shm-batch``: ``/dev/shm`` against what the workers keep in flight: workers x prefetch_factor x the
  measured bytes of one batch, for every loader alive at the train->val switch.
"""
import functools
import io
import itertools
import os
import pickle
import re
import sys
import traceback

from .result import CheckResult

NAMES = ('sampler', 'worker-pickle', 'worker-cuda', 'import-cuda', 'ddp-inplace-view', 'unused-params',
         'leftovers', 'shm-batch')
SPAWN_METHODS = ('spawn', 'forkserver')
_MAX_DEPTH = 12


def _mib(n):
    return '%.1f MiB' % (n / 2.0 ** 20)


# ============================================================================================ sampler
def sampler_of(loader):
    """The object that decides this loader's indices (its batch sampler when that is a custom one)."""
    batch_sampler = getattr(loader, 'batch_sampler', None)
    sampler = getattr(loader, 'sampler', None)
    if batch_sampler is not None and type(batch_sampler).__name__ != 'BatchSampler':
        return batch_sampler
    return sampler


def describe_sampler(sampler):
    """'DistributedSampler (num_replicas=2)', 'MySampler (not a DistributedSampler)', 'no sampler'."""
    if sampler is None:
        return 'no sampler (sequential)'
    try:
        from torch.utils.data import DistributedSampler
        distributed = isinstance(sampler, DistributedSampler)
    except ImportError:
        distributed = False
    notes = []
    if hasattr(sampler, 'num_replicas'):
        notes.append('num_replicas=%s' % getattr(sampler, 'num_replicas'))
    elif not distributed:
        notes.append('not a DistributedSampler')
    return type(sampler).__name__ + (' (%s)' % ', '.join(notes) if notes else '')


def endless_limit(size):
    """More draws than one epoch of any finite (padded) sampler of ``size`` samples can give a rank."""
    return 2 * size + 64


def sampler_draws(loader, limit=None):
    """The dataset indices this rank's loader visits in one epoch (flattened batches), at most ``limit``
    (default: 2 x len(dataset) + 64, which cuts an infinite sampler and shows that it is one). Global RNG
    states are restored afterwards, so drawing them changes nothing in the run."""
    import random

    import numpy as np
    import torch
    size = len(loader.dataset)
    limit = endless_limit(size) if limit is None else limit
    states = (random.getstate(), np.random.get_state(), torch.get_rng_state())
    try:
        batch_sampler = getattr(loader, 'batch_sampler', None)
        if batch_sampler is not None:
            flat = (int(i) for batch in batch_sampler for i in batch)
        elif getattr(loader, 'sampler', None) is not None:
            flat = (int(i) for i in loader.sampler)
        else:
            flat = iter(range(size))
        return list(itertools.islice(flat, limit))
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])


def loader_batch_size(loader):
    size = getattr(loader, 'batch_size', None)
    if size is None:
        size = getattr(getattr(loader, 'batch_sampler', None), 'batch_size', 1)
    return size or 1


def judge_val_sampler(name, rank_indices, dataset_size, sampler_text):
    """Validation: mmcv's collection (zip of the rank parts, cut to len(dataset)) must give exactly samples
    0..len-1 in order (``kradar_plugin.distributed.collection``)."""
    from ..distributed.collection import CollectionError, check_rank_indices
    try:
        check_rank_indices(rank_indices, dataset_size)
    except CollectionError as exc:
        return CheckResult('sampler', 'FAIL', '%s: %s: %s' % (name, sampler_text, exc),
                           "build the validation loader with mmdet's DistributedSampler (dist=True, shuffle=False); "
                           "in a config, drop data.val_dataloader=dict(dist=False)")
    return CheckResult('sampler', 'OK', '%s: %s: mmcv\'s result collection gives samples 0..%d in order over %d '
                       'rank(s)' % (name, sampler_text, dataset_size - 1, len(rank_indices)), '')


def judge_sampler(name, rank_draws, dataset_size, sampler_text, batch_size=1):
    """``rank_draws``: per rank, the ``sampler_draws`` of one epoch. A rank-aware sampler gives each rank its
    own share (about len / world, plus padding); FAIL when the ranks draw the same sequence, or when every rank
    draws every sample in one epoch on a dataset too large for padding to explain that. An infinite sampler
    (``sampler_draws`` hit its limit) is judged on the first 1/world of the stream, which the ranks must split
    (at most world - 1 shared draws)."""
    world = len(rank_draws)
    if world <= 1:
        return CheckResult('sampler', 'OK', '%s: %s; single process (nothing to split)' % (name, sampler_text), '')
    if any(len(d) == 0 for d in rank_draws):
        return CheckResult('sampler', 'WARN', '%s: %s gives rank(s) %s no sample at all (%d samples, %d ranks)'
                           % (name, sampler_text, [r for r, d in enumerate(rank_draws) if not d], dataset_size,
                              world), 'give every rank samples: a dataset of at least %d samples' % world)
    fix = ("use mmdet's DistributedSampler/DistributedGroupSampler (or subclass torch's DistributedSampler and "
           "yield indices[rank::num_replicas]); in a config, drop data.%s_dataloader=dict(dist=False)"
           % ('val' if 'val' in name else 'train'))
    infinite = any(len(d) >= endless_limit(dataset_size) for d in rank_draws)
    if infinite:
        share = max(1, -(-dataset_size // world))
        heads = [d[:share] for d in rank_draws]
        union = set()
        for d in heads:
            union.update(d)
        shared = sum(len(d) for d in heads) - len(union)
        if heads[0] and all(h == heads[0] for h in heads[1:]) or shared > world - 1:
            return CheckResult('sampler', 'FAIL', '%s: %s is not rank-aware: over the first %d draws of its '
                               'endless stream the ranks share %d of %d indices (every rank sees the whole '
                               'dataset)' % (name, sampler_text, share, shared, share * world), fix)
        return CheckResult('sampler', 'OK', '%s: %s (endless) splits its stream over %d ranks (first %d draws '
                           'per rank: %d shared)' % (name, sampler_text, world, share, shared), '')
    if all(d == rank_draws[0] for d in rank_draws[1:]):
        return CheckResult('sampler', 'FAIL', '%s: %s is not rank-aware: every rank draws the same %d indices '
                           'per epoch, so every rank sees the whole dataset (each sample %dx per epoch)'
                           % (name, sampler_text, len(rank_draws[0]), world), fix)
    everything = set(range(dataset_size))
    cover_all = all(everything <= set(d) for d in rank_draws)
    tiny = dataset_size <= 4 * world * max(1, batch_size)  # padding alone may give each rank every sample
    if cover_all and not tiny:
        return CheckResult('sampler', 'FAIL', '%s: %s is not rank-aware: each of the %d ranks draws all %d '
                           'samples per epoch (%s draws), so every sample is seen %dx per epoch'
                           % (name, sampler_text, world, dataset_size, '/'.join(str(len(d)) for d in rank_draws),
                              world), fix)
    return CheckResult('sampler', 'OK', '%s: %s splits %d samples over %d ranks (%s draws per rank)%s'
                       % (name, sampler_text, dataset_size, world, '/'.join(str(len(d)) for d in rank_draws),
                          ' (too few samples to tell a split from padding)' if cover_all else ''), '')


# ============================================================================================ pickling
def start_method(loader=None):
    """The start method of the loader's workers: its ``multiprocessing_context``, else torch's default."""
    ctx = getattr(loader, 'multiprocessing_context', None) if loader is not None else None
    if ctx is not None:
        return ctx.get_start_method() if hasattr(ctx, 'get_start_method') else str(ctx)
    import multiprocessing
    method = multiprocessing.get_start_method(allow_none=True)
    if method is None:
        method = 'fork' if sys.platform.startswith('linux') else 'spawn'
    return method


def worker_payload(loader):
    """[(label, object)] that the loader's workers receive by pickling under spawn/forkserver."""
    items = [('dataset', loader.dataset), ('collate_fn', loader.collate_fn)]
    if getattr(loader, 'worker_init_fn', None) is not None:
        items.append(('worker_init_fn', loader.worker_init_fn))
    return items


class _CountingSink(object):
    def __init__(self):
        self.size = 0

    def write(self, data):
        self.size += len(data)


def pickled_size(obj):
    """Bytes of ``obj`` pickled (streamed to a counter, nothing kept); raises what pickle raises."""
    sink = _CountingSink()
    pickle.Pickler(sink, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return sink.size


def _children(obj):
    if isinstance(obj, functools.partial):
        yield '.func', obj.func
        for i, a in enumerate(obj.args):
            yield '.args[%d]' % i, a
        for k, v in (obj.keywords or {}).items():
            yield '.keywords[%r]' % k, v
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield '[%r]' % (k,), v
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            yield '[%d]' % i, v
        return
    state = getattr(obj, '__dict__', None)
    if isinstance(state, dict):
        for k, v in state.items():
            yield '.' + str(k), v
    for slot in getattr(type(obj), '__slots__', ()) or ():
        if isinstance(slot, str) and hasattr(obj, slot):
            yield '.' + slot, getattr(obj, slot)


def _pickle_error(obj):
    try:
        pickled_size(obj)
        return None
    except RecursionError as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 - any pickling failure is the finding
        return exc


def where_defined(obj):
    """'file.py:12' of a function/lambda (or of its class for an instance), '' when unknown."""
    code = getattr(obj, '__code__', None)
    if code is None:
        code = getattr(getattr(obj, '__call__', None), '__code__', None) if not isinstance(obj, type) else None
    if code is None:
        return ''
    return '%s:%d' % (code.co_filename, code.co_firstlineno)


def find_unpicklable(obj, label):
    """None if ``obj`` pickles, else (path, culprit, error): the deepest attribute path whose value does not
    pickle, e.g. ``dataset.pipeline.transforms[1].fn``."""
    error = _pickle_error(obj)
    if error is None:
        return None
    path, current = label, obj
    seen = set([id(obj)])
    for _ in range(_MAX_DEPTH):
        for child_label, child in _children(current):
            if id(child) in seen:
                continue
            child_error = _pickle_error(child)
            if child_error is not None:
                seen.add(id(child))
                path, current, error = path + child_label, child, child_error
                break
        else:
            break
    return path, current, error


def _culprit_text(culprit):
    name = getattr(culprit, '__qualname__', None) or type(culprit).__name__
    where = where_defined(culprit)
    return '%s%s' % (name, ' (%s)' % where if where else '')


def judge_pickling(name, loader, method=None, found=None):
    """``found``: ``find_unpicklable`` of each payload item ([(label, result)]), computed here if None."""
    workers = getattr(loader, 'num_workers', 0) or 0
    method = method or start_method(loader)
    if workers == 0:
        return CheckResult('worker-pickle', 'OK', '%s: no worker processes (num_workers=0)' % name, '')
    if found is None:
        found = [(label, find_unpicklable(obj, label)) for label, obj in worker_payload(loader)]
    bad = [(label, f) for label, f in found if f is not None]
    if not bad:
        return CheckResult('worker-pickle', 'OK', '%s: %d worker(s), start method %s: dataset, collate_fn and '
                           'worker_init_fn pickle' % (name, workers, method), '')
    path, culprit, error = bad[0][1]
    err = '%s: %s' % (type(error).__name__, str(error).splitlines()[0] if str(error) else '')
    if method not in SPAWN_METHODS:
        return CheckResult('worker-pickle', 'OK', '%s: %d worker(s), start method %s: workers inherit the dataset '
                           'without pickling (it would not pickle under spawn/forkserver: %s = %s)'
                           % (name, workers, method, path, _culprit_text(culprit)), '')
    return CheckResult(
        'worker-pickle', 'FAIL',
        '%s: %d worker(s) with start method %s pickle the dataset, collate_fn and worker_init_fn, but %s = %s '
        'does not pickle (%s): the first batch fails in every worker' % (name, workers, method, path,
                                                                         _culprit_text(culprit), err),
        'replace the lambda/local function by a module-level function (or a registered transform class with '
        '__call__); or data.workers_per_gpu=0; or the fork start method (mp_start_method=\'fork\', no '
        'multiprocessing_context=\'spawn\')')


# ============================================================================================ CUDA
_TRACE = {'installed': False, 'attempts': []}
_THIS_FILE = os.path.abspath(__file__)


def _call_site(stack):
    """The innermost frame outside torch (file:line and code) of a CUDA initialisation attempt."""
    torch_dir = os.sep + 'torch' + os.sep
    for frame in reversed(stack):
        if torch_dir not in frame.filename and os.path.abspath(frame.filename) != _THIS_FILE:
            return '%s:%d %s' % (frame.filename, frame.lineno, (frame.line or '').strip())
    return 'unknown'


def install_cuda_tracer():
    """Record every call of ``torch.cuda._lazy_init`` (what .cuda(), device='cuda' and torch.cuda.* call
    first) with its call site, successful or not. Idempotent; returns the list of attempts."""
    import torch
    import torch.cuda
    if _TRACE['installed']:
        return _TRACE['attempts']
    original = torch.cuda._lazy_init

    @functools.wraps(original)
    def traced_lazy_init(*args, **kwargs):
        if not torch.cuda.is_initialized() and len(_TRACE['attempts']) < 20:
            _TRACE['attempts'].append({'where': _call_site(traceback.extract_stack()[:-1]), 'pid': os.getpid()})
        return original(*args, **kwargs)

    torch.cuda._lazy_init = traced_lazy_init
    _TRACE['installed'] = True
    return _TRACE['attempts']


def cuda_state():
    """{'initialized', 'attempts', 'pid'} of this process (attempts a forked worker inherited from its parent
    are not its own and are left out)."""
    import torch
    pid = os.getpid()
    return {'initialized': bool(torch.cuda.is_initialized()),
            'attempts': [a for a in _TRACE['attempts'] if a['pid'] == pid], 'pid': pid}


def _rebuild_probe_dataset(payload, index):
    install_cuda_tracer()  # before the dataset's modules are imported in a spawned worker
    return _ProbeDataset(pickle.loads(payload), index)


class _ProbeDataset(object):
    """Yields one sample of ``dataset`` in a worker; under spawn it is unpickled after the CUDA tracer is in."""

    def __init__(self, dataset, index=0):
        self.dataset = dataset
        self.index = index

    def __reduce__(self):
        return _rebuild_probe_dataset, (pickle.dumps(self.dataset, protocol=pickle.HIGHEST_PROTOCOL), self.index)

    def __len__(self):
        return 1

    def __getitem__(self, i):
        install_cuda_tracer()
        return self.dataset[self.index]


class _ProbeCollate(object):
    """Runs the loader's collate_fn in the worker, then reports the worker's CUDA state instead of the batch."""

    def __init__(self, collate_fn):
        self.collate_fn = collate_fn

    def __call__(self, batch):
        if self.collate_fn is not None:
            self.collate_fn(batch)
        return cuda_state()


def probe_worker_cuda(loader, timeout=300):
    """The CUDA state of one real worker of ``loader`` (same start method and worker_init_fn) after it
    loaded and collated one sample; None without workers."""
    if not getattr(loader, 'num_workers', 0):
        return None
    from torch.utils.data import DataLoader
    probe = DataLoader(_ProbeDataset(loader.dataset, 0), batch_size=1, shuffle=False, num_workers=1,
                       collate_fn=_ProbeCollate(loader.collate_fn), worker_init_fn=loader.worker_init_fn,
                       multiprocessing_context=getattr(loader, 'multiprocessing_context', None), timeout=timeout)
    iterator = iter(probe)
    try:
        return next(iterator)
    finally:
        del iterator


def probe_failed(name, method, exc):
    """WARN: the probe worker could not load or collate a sample (the dataset's own error, which this loader
    meets in the run too; an eval-only run never iterates the training loader)."""
    lines = str(exc).strip().splitlines()
    last = lines[-1].strip() if lines else ''
    error = last if last.startswith(type(exc).__name__) else '%s: %s' % (type(exc).__name__, last)
    return CheckResult('worker-cuda', 'WARN', '%s: the probe worker (start method %s) could not load a sample: '
                       '%s' % (name, method, error),
                       'run this loader with num_workers=0 to see the whole error in the main process')


def _attempt_text(state):
    attempts = state.get('attempts') or []
    if not attempts:
        return 'torch.cuda.is_initialized() is True'
    first = attempts[0]['where']
    more = ' (+%d more)' % (len(attempts) - 1) if len(attempts) > 1 else ''
    return 'first call: %s%s' % (first, more)


_CUDA_FIX = ('keep datasets, pipelines and collate on the CPU (tensors reach the GPU through the model\'s '
             'scatter); create CUDA tensors lazily inside the model, never at import time or in default arguments')


def judge_worker_cuda(name, state, method=None, skipped=None):
    if skipped:
        return CheckResult('worker-cuda', 'OK', '%s: not probed (%s)' % (name, skipped), '')
    if state is None:
        return CheckResult('worker-cuda', 'OK', '%s: no worker processes (num_workers=0)' % name, '')
    if state.get('initialized') or state.get('attempts'):
        return CheckResult(
            'worker-cuda', 'FAIL',
            '%s: a DataLoader worker (start method %s) touches CUDA: %s; every worker of every rank then creates '
            'a CUDA context on GPU 0 (hundreds of MiB each%s)'
            % (name, method or '?', _attempt_text(state),
               '; with fork it fails: "Cannot re-initialize CUDA in forked subprocess"' if method == 'fork' else ''),
            _CUDA_FIX)
    return CheckResult('worker-cuda', 'OK', '%s: a worker (start method %s) loaded and collated a sample without '
                       'touching CUDA' % (name, method or '?'), '')


def judge_import_cuda(state, what='the config\'s custom_imports/plugin'):
    if state is None:
        return CheckResult('import-cuda', 'OK', 'not probed', '')
    if state.get('initialized') or state.get('attempts'):
        return CheckResult(
            'import-cuda', 'FAIL',
            'importing %s touches CUDA: %s; spawn/forkserver DataLoader workers re-import it, so each creates a '
            'CUDA context on GPU 0, and fork workers inherit an initialised CUDA they cannot use'
            % (what, _attempt_text(state)), _CUDA_FIX)
    return CheckResult('import-cuda', 'OK', 'importing %s does not touch CUDA' % what, '')


# ============================================================================================ DDP / torch 1.10
def judge_ddp_view(torch_version, find_unused=None, static_graph=False, distributed=True):
    """torch 1.10.x: DDP runs outputs through _DDPSink (views) with find_unused_parameters=True or
    static_graph; an in-place op on them raises. ``find_unused`` None: not known (no config)."""
    if not torch_version:
        return CheckResult('ddp-inplace-view', 'SKIP', 'torch not installed', '')
    match = re.match(r'(\d+)\.(\d+)', str(torch_version))
    if not match or (int(match.group(1)), int(match.group(2))) != (1, 10):
        return CheckResult('ddp-inplace-view', 'OK', 'torch %s: DDP outputs can be modified in place (the 1.10 '
                           '_DDPSink view error is fixed since 1.11)' % torch_version, '')
    if not distributed:
        return CheckResult('ddp-inplace-view', 'OK', 'torch %s, single process: no DDP' % torch_version, '')
    if find_unused is None and not static_graph:
        return CheckResult('ddp-inplace-view', 'SKIP', 'torch %s: DDP outputs are views with '
                           'find_unused_parameters=True; give --config to know' % torch_version, '')
    if not find_unused and not static_graph:
        return CheckResult('ddp-inplace-view', 'OK', 'torch %s with find_unused_parameters=False: DDP returns '
                           'its outputs as they are' % torch_version, '')
    return CheckResult(
        'ddp-inplace-view', 'WARN',
        'torch %s with DDP and %s: DDP returns its outputs through _DDPSink as views; an in-place op on one '
        '(loss /= n, out[..., :2] = ..., x += y) raises "Output 0 of SliceBackward0/_DDPSinkBackward is a view '
        'and is being modified inplace" (pytorch#61982, fixed in torch 1.11 by pytorch#66015)'
        % (torch_version, 'static_graph' if static_graph else 'find_unused_parameters=True'),
        "pip install 'torch>=1.11' (with the matching mmcv-full), or make those ops out-of-place "
        "(x = x + y; out = out.clone() before out[..., :2] = ...)")


# ============================================================================================ unused parameters
def probe_unused_parameters(model, data):
    """Names of the parameters (requires_grad) that get no gradient from one forward/backward of ``model``
    on ``data`` (already scattered: the keyword arguments of ``train_step``/forward). Model state (buffers,
    gradients, train/eval mode) and the global RNGs are restored afterwards."""
    import random

    import numpy as np
    import torch
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    saved_grads = [p.grad for _, p in params]
    saved_buffers = [(b, b.detach().clone()) for b in model.buffers()]
    rng = (random.getstate(), np.random.get_state(), torch.get_rng_state())
    training = model.training
    try:
        for _, p in params:
            p.grad = None
        model.train()
        with torch.enable_grad():
            if hasattr(model, 'train_step'):
                outputs = model.train_step(data, None)
                loss = outputs['loss'] if isinstance(outputs, dict) else outputs
            else:
                losses = model(**data)
                loss = _sum_losses(losses)
            loss.backward()
        return [n for n, p in params if p.grad is None]
    finally:
        for (_, p), g in zip(params, saved_grads):
            p.grad = g
        with torch.no_grad():
            for b, value in saved_buffers:
                b.copy_(value)
        model.train(training)
        random.setstate(rng[0])
        np.random.set_state(rng[1])
        torch.set_rng_state(rng[2])


def _sum_losses(losses):
    import torch
    if torch.is_tensor(losses):
        return losses.sum()
    total = 0
    for key, value in losses.items():
        if 'loss' not in key:
            continue
        if isinstance(value, (list, tuple)):
            total = total + sum(v.sum() for v in value)
        else:
            total = total + value.sum()
    return total


def _group_names(names, limit=4):
    groups = {}
    for n in names:
        groups.setdefault(n.rsplit('.', 1)[0] if '.' in n else n, []).append(n)
    items = sorted(groups.items())
    text = ', '.join('%s (%d)' % (g, len(v)) for g, v in items[:limit])
    return text + (', ... (%d modules)' % len(items) if len(items) > limit else '')


def judge_unused(unused, find_unused, distributed=True, total=None):
    """``unused``: parameter names without gradient (None: not probed)."""
    if unused is None:
        return CheckResult('unused-params', 'SKIP', 'model not probed (opt-in: --probe-model / '
                           'runner.probe_model=True)', '')
    setting = 'find_unused_parameters=%s' % bool(find_unused)
    if unused and not find_unused:
        return CheckResult(
            'unused-params', 'FAIL' if distributed else 'WARN',
            '%d parameter tensor(s) get no gradient in one forward/backward: %s; DDP with %s fails at the next '
            'iteration: "Expected to have finished reduction in the prior iteration before starting a new one"'
            % (len(unused), _group_names(unused), setting),
            'find_unused_parameters = True in the config (a graph traversal per step), or remove the unused '
            'module / freeze it (requires_grad=False); TORCH_DISTRIBUTED_DEBUG=DETAIL names them in a real run')
    if not unused and find_unused:
        return CheckResult(
            'unused-params', 'WARN',
            'find_unused_parameters=True but every parameter%s got a gradient in one forward/backward: DDP '
            'traverses the autograd graph every iteration for nothing'
            % (' (%d tensors)' % total if total else ''),
            'find_unused_parameters = False (keep True only if some branches are skipped on some batches)')
    if unused:
        return CheckResult('unused-params', 'OK', '%d parameter tensor(s) without gradient (%s), handled by %s'
                           % (len(unused), _group_names(unused), setting), '')
    return CheckResult('unused-params', 'OK', 'every parameter got a gradient in one forward/backward (%s)'
                       % setting, '')


# ============================================================================================ leftovers
_TRAINING_CMD = re.compile(r'(train\.py|test\.py|torch\.distributed\.(run|launch)|torchrun|dist_train\.sh|'
                           r'multiprocessing\.(spawn|forkserver)|from multiprocessing)')


def _read(path, binary=False):
    try:
        with io.open(path, 'rb' if binary else 'r') as f:
            return f.read()
    except (OSError, IOError, UnicodeDecodeError):
        return None


def _proc_stat(proc, pid):
    text = _read(os.path.join(proc, str(pid), 'stat'))
    if not text or ')' not in text:
        return None
    comm = text[text.index('(') + 1:text.rindex(')')]
    fields = text[text.rindex(')') + 2:].split()
    return {'comm': comm, 'ppid': int(fields[1]), 'start_ticks': int(fields[19])}


def own_process_tree(proc='/proc', pid=None):
    """This process, its ancestors, and every descendant of its top-most ancestor that is part of the same
    job (the launcher's children: the other ranks and their workers)."""
    pid = pid or os.getpid()
    stats = {}
    for entry in os.listdir(proc):
        if entry.isdigit():
            st = _proc_stat(proc, entry)
            if st:
                stats[int(entry)] = st
    ancestors = []
    current = pid
    while current in stats and current not in ancestors and current > 1:
        ancestors.append(current)
        current = stats[current]['ppid']
    # the job's root: the outermost ancestor whose command is a launcher or a train script
    roots = [a for a in ancestors if _TRAINING_CMD.search(_cmdline(proc, a) or '')]
    root = roots[-1] if roots else pid
    children = {}
    for p, st in stats.items():
        children.setdefault(st['ppid'], []).append(p)
    tree, stack = set(), [root, pid]
    while stack:
        p = stack.pop()
        if p not in tree:
            tree.add(p)
            stack.extend(children.get(p, []))
    return tree | set(ancestors)


def _cmdline(proc, pid):
    raw = _read(os.path.join(proc, str(pid), 'cmdline'), binary=True)
    return raw.replace(b'\0', b' ').decode('utf-8', 'replace').strip() if raw else ''


def probe_leftovers(proc='/proc', shm_dir='/dev/shm', exclude=None):
    """Processes of other training jobs and torch_shm_manager daemons of this user, and /dev/shm/torch_*
    segments whose creating process is gone. ``exclude``: pids of the current job (default: own tree)."""
    exclude = own_process_tree(proc) if exclude is None else set(exclude)
    uid = os.getuid() if hasattr(os, 'getuid') else None
    try:
        ticks = os.sysconf('SC_CLK_TCK')
        uptime = float((_read(os.path.join(proc, 'uptime')) or '0').split()[0])
    except (ValueError, OSError, AttributeError, IndexError):
        ticks, uptime = 100, 0.0
    processes, managers = [], []
    for entry in os.listdir(proc) if os.path.isdir(proc) else ():
        if not entry.isdigit() or int(entry) in exclude:
            continue
        try:
            if uid is not None and os.stat(os.path.join(proc, entry)).st_uid != uid:
                continue
        except OSError:
            continue
        st = _proc_stat(proc, entry)
        if not st:
            continue
        age = max(0.0, uptime - st['start_ticks'] / float(ticks)) if uptime else None
        if st['comm'] == 'torch_shm_manager'[:15]:  # the kernel keeps 15 characters of a command name
            managers.append({'pid': int(entry), 'age_s': age})
            continue
        cmd = _cmdline(proc, entry)
        if cmd and 'python' in cmd.split(' ', 1)[0] and _TRAINING_CMD.search(cmd):
            processes.append({'pid': int(entry), 'age_s': age, 'cmd': cmd[:200]})
    segments = []
    for name in sorted(os.listdir(shm_dir)) if os.path.isdir(shm_dir) else ():
        match = re.match(r'torch_(\d+)_', name)
        if not match:
            continue
        creator = int(match.group(1))
        if os.path.exists(os.path.join(proc, str(creator))):
            continue
        try:
            size = os.path.getsize(os.path.join(shm_dir, name))
        except OSError:
            continue
        segments.append({'name': name, 'bytes': size, 'pid': creator})
    return {'processes': processes, 'shm-managers': managers, 'shm-segments': segments}


def _age(seconds):
    if seconds is None:
        return '?'
    if seconds >= 3600:
        return '%.1f h' % (seconds / 3600.0)
    return '%d min' % (seconds // 60) if seconds >= 60 else '%d s' % seconds


def judge_leftovers(found, include_managers=True):
    """``include_managers``: also report torch_shm_manager daemons (the doctor's sharing-strategy check
    already does)."""
    problems, fixes = [], []
    procs = found.get('processes') or []
    if procs:
        problems.append('%d other training/worker process(es) run on this machine (not part of this job): %s' % (
            len(procs), '; '.join('pid %d (%s) %s' % (p['pid'], _age(p.get('age_s')), p['cmd'][:80])
                                  for p in procs[:3])))
        fixes.append('if they belong to finished or crashed runs: kill %s (they hold GPU memory, /dev/shm and '
                     'ports)' % ' '.join(str(p['pid']) for p in procs[:10]))
    managers = (found.get('shm-managers') or []) if include_managers else []
    if managers:
        problems.append('%d torch_shm_manager daemon(s) alive (file_system sharing of earlier runs)' % len(managers))
        fixes.append('kill %s' % ' '.join(str(m['pid']) for m in managers[:10]))
    segments = found.get('shm-segments') or []
    if segments:
        total = sum(s['bytes'] for s in segments)
        problems.append('%d /dev/shm/torch_* segment(s) (%s) left by exited processes' % (len(segments), _mib(total)))
        fixes.append('rm /dev/shm/torch_<pid>_* of dead pids (%s)' % ', '.join(s['name'] for s in segments[:3]))
    if not problems:
        return CheckResult('leftovers', 'OK', 'no leftover training processes, torch_shm_manager daemons or '
                           '/dev/shm/torch_* segments', '')
    return CheckResult('leftovers', 'WARN', '; '.join(problems), '; '.join(fixes))


# ============================================================================================ /dev/shm vs batches
def batch_nbytes(batch):
    """Bytes of the tensors in a collated batch (DataContainers, dicts, lists looked through): what a worker
    puts in shared memory per batch."""
    import torch
    seen = set()

    def walk(obj):
        if torch.is_tensor(obj):
            key = (obj.data_ptr(), obj.numel())
            if key in seen:
                return 0
            seen.add(key)
            return obj.numel() * obj.element_size()
        if hasattr(obj, 'data') and type(obj).__name__ == 'DataContainer':
            return walk(obj.data)
        if isinstance(obj, dict):
            return sum(walk(v) for v in obj.values())
        if isinstance(obj, (list, tuple)):
            return sum(walk(v) for v in obj)
        return 0
    return walk(batch)


def first_batch(loader):
    """One batch of ``loader``'s dataset, loaded in this process (num_workers=0, first batch_size indices)."""
    from torch.utils.data import DataLoader
    indices = list(range(min(loader_batch_size(loader), len(loader.dataset))))
    single = DataLoader(loader.dataset, batch_size=len(indices), sampler=indices, num_workers=0,
                        collate_fn=loader.collate_fn)
    return next(iter(single))


def loader_shm_demand(name, loader, batch_bytes):
    workers = getattr(loader, 'num_workers', 0) or 0
    prefetch = getattr(loader, 'prefetch_factor', 2) or 2
    return {'name': name, 'workers': workers, 'prefetch': prefetch, 'batch-bytes': batch_bytes}


def judge_shm_batch(demands, shm_total, shm_free, processes_per_node=1):
    """``demands``: [{'name', 'workers', 'prefetch', 'batch-bytes'}] of the loaders alive together."""
    if shm_total is None:
        return CheckResult('shm-batch', 'SKIP', 'no /dev/shm here', '')
    active = [d for d in demands if d.get('workers') and d.get('batch-bytes') is not None]
    if not active:
        return CheckResult('shm-batch', 'OK', 'no DataLoader workers: batches do not go through /dev/shm', '')
    need = sum(d['workers'] * d['prefetch'] * d['batch-bytes'] for d in active) * processes_per_node
    detail = ' + '.join('%s %d workers x %d prefetch x %s' % (d['name'], d['workers'], d['prefetch'],
                                                             _mib(d['batch-bytes'])) for d in active)
    what = '%s%s = %s in flight' % (detail, ' x %d processes' % processes_per_node if processes_per_node > 1
                                    else '', _mib(need))
    free = shm_free if shm_free is not None else shm_total
    if need > free:
        return CheckResult('shm-batch', 'FAIL', '/dev/shm has %s free (of %s) for %s: workers die with a bus error '
                           '(signal 7) at the first batches or at the train->val switch'
                           % (_mib(free), _mib(shm_total), what),
                           'docker run --ipc=host or --shm-size=%dg; or fewer workers_per_gpu / smaller batches'
                           % max(1, -(-2 * need // 2 ** 30)))
    if need > free / 2.0:
        return CheckResult('shm-batch', 'WARN', '/dev/shm has %s free (of %s) for %s: little headroom'
                           % (_mib(free), _mib(shm_total), what),
                           'docker run --ipc=host or --shm-size=%dg' % max(1, -(-2 * need // 2 ** 30)))
    return CheckResult('shm-batch', 'OK', '/dev/shm %s free for %s' % (_mib(free), what), '')


def shm_space(path='/dev/shm'):
    """(total bytes, free bytes) of the shared-memory filesystem, (None, None) without one."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None, None
    return st.f_frsize * st.f_blocks, st.f_frsize * st.f_bavail


def as_dicts(results):
    return [dict(r._asdict()) for r in results]


def from_dicts(items):
    return [CheckResult(d['name'], d['status'], d['reason'], d.get('fix', '')) for d in items]
