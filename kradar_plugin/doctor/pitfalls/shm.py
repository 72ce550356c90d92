"""Check ``shm-batch``: ``/dev/shm`` against what the DataLoader workers keep in flight: workers x
prefetch_factor x the measured bytes of one batch, for every loader alive at the train->val switch."""
import os

from ...facts.result import CheckResult
from .sampler import loader_batch_size


def mib(n):
    """'12.5 MiB'."""
    return '%.1f MiB' % (n / 2.0 ** 20)


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
                                                             mib(d['batch-bytes'])) for d in active)
    what = '%s%s = %s in flight' % (detail, ' x %d processes' % processes_per_node if processes_per_node > 1
                                    else '', mib(need))
    free = shm_free if shm_free is not None else shm_total
    if need > free:
        return CheckResult('shm-batch', 'FAIL', '/dev/shm has %s free (of %s) for %s: workers die with a bus error '
                           '(signal 7) at the first batches or at the train->val switch'
                           % (mib(free), mib(shm_total), what),
                           'docker run --ipc=host or --shm-size=%dg; or fewer workers_per_gpu / smaller batches'
                           % max(1, -(-2 * need // 2 ** 30)))
    if need > free / 2.0:
        return CheckResult('shm-batch', 'WARN', '/dev/shm has %s free (of %s) for %s: little headroom'
                           % (mib(free), mib(shm_total), what),
                           'docker run --ipc=host or --shm-size=%dg' % max(1, -(-2 * need // 2 ** 30)))
    return CheckResult('shm-batch', 'OK', '/dev/shm %s free for %s' % (mib(free), what), '')


def shm_space(path='/dev/shm'):
    """(total bytes, free bytes) of the shared-memory filesystem, (None, None) without one."""
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None, None
    return st.f_frsize * st.f_blocks, st.f_frsize * st.f_bavail
