"""Check ``worker-pickle``: with ``num_workers > 0`` and the spawn/forkserver start method the dataset (with
its pipeline), ``collate_fn`` and ``worker_init_fn`` are pickled into each worker; a lambda or local function
anywhere in them fails there. The path of the first unpicklable object is named."""
import functools
import pickle
import sys

from ...facts.result import CheckResult

SPAWN_METHODS = ('spawn', 'forkserver')
_MAX_DEPTH = 12


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
    except Exception as exc:  # noqa: BLE001 - any pickling failure (RecursionError too) is the finding
        return exc
    return None


def where_defined(obj):
    """'file.py:12' of a function/lambda (or of its class for an instance), '' when unknown."""
    code = getattr(obj, '__code__', None)
    if code is None:
        code = getattr(getattr(obj, '__call__', None), '__code__', None) if not isinstance(obj, type) else None
    return '%s:%d' % (code.co_filename, code.co_firstlineno) if code is not None else ''


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
