"""The converter's split lists in forked processes: results in the lists' order, each job's bad file as its
one error, and a process that dies (killed, out of memory) an error naming its list, never a wait without end."""
import os
import signal

import numpy as np
import pytest

from kradar_plugin.files.quirks import Quirks
from kradar_plugin.files.split_jobs import SplitJob, run_jobs
from kradar_plugin.files.errors import KRadarFileError

fork_only = pytest.mark.skipif(not hasattr(os, 'fork'), reason='forked workers need POSIX')


def _infos(n):
    return [{'annos': {'rotation_y': np.zeros(k % 3)}} for k in range(n)]


def _ok(entries, quirks, step):
    quirks.add('header_only', 'x/{}.txt'.format(len(entries)))
    step.update(len(entries))
    return _infos(len(entries))


def _bad_file(entries, quirks, step):
    raise KRadarFileError('1/00033_00001.txt', 'expected a number', line=4, field='y', value='two')


def _killed(entries, quirks, step):
    os.kill(os.getpid(), signal.SIGKILL)


def _no_memory(entries, quirks, step):
    raise MemoryError()


class _Bar(object):
    def __init__(self):
        self.total, self.done, self.closed = None, 0, False

    def start(self, total, label):
        self.total = total

    def update(self, n):
        self.done += n

    def close(self):
        self.closed = True


@fork_only
@pytest.mark.parametrize('workers', [1, 2])
def test_results_in_order_with_their_quirks_and_one_bar(workers):
    bar = _Bar()
    out = run_jobs([SplitJob('test', list(range(5)), _ok), SplitJob('train', list(range(7)), _ok)], bar, workers)
    assert [(name, frames, objects) for name, _, frames, objects, _ in out] == [('test', 5, 4), ('train', 7, 6)]
    assert all(isinstance(q, Quirks) and q.counts == {'header_only': 1} for *_, q in out)
    assert (bar.total, bar.done, bar.closed) == (12, 12, True)


@fork_only
@pytest.mark.parametrize('convert,needle', [
    (_bad_file, "1/00033_00001.txt:4: field y = 'two' expected a number"),
    (_killed, 'train: the process converting it ended without a result (exit code -9'),
    (_no_memory, 'train: out of memory while converting 3 frames'),
])
def test_a_failing_job_is_one_error_naming_it(convert, needle):
    with pytest.raises(ValueError) as e:
        run_jobs([SplitJob('test', [1, 2], _ok), SplitJob('train', [1, 2, 3], convert)], None, 2)
    assert needle in str(e.value)
