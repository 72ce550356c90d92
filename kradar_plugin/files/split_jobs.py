"""The converter's work per split list (parse the labels, build the infos, pickle them), one process per list
where the machine has the cores: the lists are independent, and K-Radar's two (train, test) are of equal size,
so the whole command takes about half the time on two cores. Each job returns its pickle and the quirks it met;
nothing is written here (the converter writes after ``--strict`` has had its say).

Processes are forked (POSIX): the parent's tree, split lists and imports are inherited, nothing is re-imported.
Elsewhere, with one core or one list, the jobs run one after the other in this process.
"""
import collections
import gc
import multiprocessing
import os

from .errors import KRadarFileError
from .portable_pickle import dumps
from .quirks import Quirks


SplitJob = collections.namedtuple('SplitJob', 'name entries convert')
SplitJob.__doc__ = 'One split list to convert: ``convert(entries, quirks, progress)`` gives its infos.'


def run_jobs(jobs, progress=None, workers=None):
    """[(name, pickle bytes, frames, objects, Quirks)] of ``jobs`` in their order; the first job (in order)
    that met a bad file raises its error (a ValueError with the one-line message). ``progress`` is a bar
    (start/update/close) over all frames."""
    total = sum(len(j.entries) for j in jobs)
    if progress is not None:
        progress.start(total, 'infos')
    workers = _workers(len(jobs)) if workers is None else workers
    if workers > 1:
        results = _forked(jobs, workers, progress)
    else:
        results = [_run(job, _Step(progress)) for job in jobs]
    if progress is not None:
        progress.close()
    out = []
    for result in results:
        if result[0] == 'error':
            raise ValueError(result[1])
        out.append(result[1:])
    return out


def _workers(n_jobs):
    if n_jobs < 2 or 'fork' not in multiprocessing.get_all_start_methods():
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(n_jobs, cores))


class _Step(object):
    """The converter's progress calls forwarded to a bar (in process) or to a shared counter (forked)."""

    def __init__(self, bar=None, counter=None):
        self.bar, self.counter = bar, counter

    def start(self, total, label):
        pass

    def update(self, n):
        if self.bar is not None:
            self.bar.update(n)
        elif self.counter is not None:
            with self.counter.get_lock():
                self.counter.value += n

    def close(self):
        pass


def _run(job, step):
    """('ok', name, pickle, frames, objects, quirks) or ('error', message)."""
    quirks = Quirks()
    enabled = gc.isenabled()
    gc.disable()        # the infos are a million small containers that no collection could free: not scanned
    try:
        infos = job.convert(job.entries, quirks, step)
        data = dumps(infos)
    except (KRadarFileError, ValueError, OSError) as exc:
        return 'error', str(exc)
    except MemoryError:
        return 'error', '{}: out of memory while converting {} frames'.format(job.name, len(job.entries))
    finally:
        if enabled:
            gc.enable()
    return 'ok', job.name, data, len(infos), sum(len(i['annos']['rotation_y']) for i in infos), quirks


def _child(job, send, counter):
    """A forked worker: its job's result through ``send`` (an unexpected exception as its traceback)."""
    try:
        result = _run(job, _Step(counter=counter))
    except BaseException:      # noqa: B902 - a bug: the parent raises it with this traceback
        import traceback
        result = 'crash', traceback.format_exc()
    send.send(result)
    send.close()


def _forked(jobs, workers, progress):
    """The results of ``jobs`` run in forked processes, ``workers`` at a time. A process that ends without a
    result (killed, out of memory) is that job's error, never a wait without end."""
    from multiprocessing.connection import wait
    ctx = multiprocessing.get_context('fork')
    counter = ctx.Value('l', 0)
    results, todo, running, shown = [None] * len(jobs), list(range(len(jobs))), {}, 0
    try:
        while todo or running:
            while todo and len(running) < workers:
                index = todo.pop(0)
                recv, send = ctx.Pipe(duplex=False)
                process = ctx.Process(target=_child, args=(jobs[index], send, counter))
                process.daemon = True
                process.start()
                send.close()
                running[recv] = (index, process)
            for conn in wait(list(running), timeout=0.2):
                index, process = running.pop(conn)
                try:
                    results[index] = conn.recv()
                except EOFError:
                    process.join()
                    results[index] = ('error', '{}: the process converting it ended without a result (exit code '
                                               '{}: killed, or out of memory?)'.format(jobs[index].name,
                                                                                       process.exitcode))
                conn.close()
                process.join()
                if results[index][0] == 'crash':
                    raise RuntimeError('converting {} failed:\n{}'.format(jobs[index].name, results[index][1]))
            if progress is not None and counter.value > shown:
                progress.update(counter.value - shown)
                shown = counter.value
    finally:
        for conn, (_, process) in running.items():
            process.terminate()
            process.join()
            conn.close()
    return results
