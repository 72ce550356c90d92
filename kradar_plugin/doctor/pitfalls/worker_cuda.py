"""Checks ``worker-cuda`` / ``import-cuda``: CUDA initialised in a DataLoader worker or at import.

CUDA initialised in a worker (or while importing the config's modules, which spawn workers repeat) makes
every worker create a context on GPU 0. A worker is probed for ``torch.cuda.is_initialized()``, and every
attempt to initialise CUDA (``torch.cuda._lazy_init``, what ``.cuda()`` and ``device='cuda'`` call) is
recorded with its call site, so the attempt is seen even on a machine without a GPU, where it fails.
"""
import functools
import os
import pickle
import traceback

from ...facts.result import CheckResult

_TRACE = {'installed': False, 'attempts': []}

# Frames in the pitfalls package (the probe dataset and collate, the tracer) are not the call site.
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _call_site(stack):
    """The innermost frame outside torch (file:line and code) of a CUDA initialisation attempt."""
    torch_dir = os.sep + 'torch' + os.sep
    for frame in reversed(stack):
        in_package = os.path.dirname(os.path.abspath(frame.filename)) == _PACKAGE_DIR
        if torch_dir not in frame.filename and not in_package:
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
