"""kradar-eval reads its two pickles in forked worker processes while numba starts: same numbers and the
same errors as reading in process, and a worker that dies is named instead of hanging the command."""
import gc
import multiprocessing
import os
import pickle
import signal
import sys

import numpy as np
import pytest

from kradar_plugin import settings
from kradar_plugin.evaluation.cli import read_checked
from kradar_plugin.evaluation import KRadarEvaluator
from kradar_plugin.evaluation.engine import fields_read
from kradar_plugin.evaluation.validation import CheckedSide, check_side
from kradar_plugin.loading import safe_load
from tests.launching import gather

from ._data import noisy_dets, random_gt
from .test_validation_cli import GT, _bad, _pickles, _run_cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith('linux'), reason='the workers fork (Linux only)')


def _random_set(n_frames, seed=3):
    rs = np.random.RandomState(seed)
    gts = [random_gt(rs, rs.randint(0, 6)) for _ in range(n_frames)]
    return gts, [noisy_dets(rs, g, rs.randint(0, 5)) for g in gts]


@pytest.fixture
def workers(monkeypatch):
    monkeypatch.setenv(settings.EVAL_LOAD_WORKERS, '1')


def _names(children):
    return sorted(p.name for p in children)


def test_workers_read_while_meanwhile_runs_and_give_the_in_process_sides(tmp_path, workers):
    gts, dts = _random_set(300)
    files = _pickles(tmp_path, gts, dts)
    fields = fields_read(['legacy', 'fixed'], 'all', ['bbox', 'bev', '3d'])
    seen = []
    gt, dt = read_checked(files[1], files[3], fields,
                          meanwhile=lambda: seen.append(_names(multiprocessing.active_children())))
    assert seen == [['kradar-eval-read--dt-annos', 'kradar-eval-read--gt-annos']]
    assert multiprocessing.active_children() == []
    for got, annos, side in ((gt, gts, 'gt_annos'), (dt, dts, 'dt_annos')):
        want = check_side(annos, side, fields)
        assert isinstance(got, CheckedSide) and got.n_frames == 300 and got.fields == want.fields
        assert np.array_equal(got.offsets, want.offsets) and sorted(got.data) == sorted(want.data)
        for key, value in want.data.items():
            assert np.array_equal(got.data[key], value), key
    from_workers = KRadarEvaluator(['Sedan'], ['legacy', 'fixed'], ['bbox', 'bev', '3d']).evaluate_gathered(gt, dt)[0]
    direct = KRadarEvaluator(['Sedan'], ['legacy', 'fixed'], ['bbox', 'bev', '3d']).evaluate_gathered(gts, dts)[0]
    for a, b in zip(from_workers, direct):
        for metric in b.ap:
            assert np.array_equal(a.ap[metric], b.ap[metric])


def test_small_trusted_files_are_read_in_process_untrusted_ones_in_children(tmp_path, monkeypatch):
    """Trusted small files: in process (forking would cost more); untrusted files always in a child, whose
    address-space and time limits bound what a hostile file can do."""
    monkeypatch.delenv(settings.EVAL_LOAD_WORKERS, raising=False)
    files = _pickles(tmp_path, [GT], [_bad()])
    called = []
    gt, dt = read_checked(files[1], files[3], set(), meanwhile=lambda: called.append(1), trusted=True)
    assert called == [] and gt.n_frames == dt.n_frames == 1
    assert os.path.getsize(files[1]) + os.path.getsize(files[3]) < safe_load.MIN_PARALLEL_BYTES
    started = []
    start = safe_load._start

    def recording_start(context, job, *args):
        worker = start(context, job, *args)
        started.append(worker[0].name)
        return worker

    # which children read: recorded as they start (a tiny file's child may already have ended by the time
    # ``meanwhile`` runs, so listing the live children raced)
    monkeypatch.setattr(safe_load, '_start', recording_start)
    gt, dt = read_checked(files[1], files[3], set(), meanwhile=lambda: called.append('meanwhile'))
    assert sorted(started) == ['kradar-eval-read--dt-annos', 'kradar-eval-read--gt-annos'] and gt.n_frames == 1
    assert called == ['meanwhile'] and multiprocessing.active_children() == []


def test_cli_prints_the_same_with_and_without_workers(tmp_path, monkeypatch):
    gts, dts = _random_set(400, seed=5)
    files = _pickles(tmp_path, gts, dts)
    out = {}
    for value in ('0', '1'):
        monkeypatch.setenv(settings.EVAL_LOAD_WORKERS, value)
        proc = _run_cli(files + ['--protocol', 'all', '--eval-types', 'bev', '3d'], str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        out[value] = proc.stdout
    assert out['0'] == out['1'] and 'fixed - legacy' in out['1']


def test_a_bad_value_in_a_worker_reads_as_in_process(tmp_path, workers):
    dt = _bad(location=np.array([[0, 0, 20], [np.nan, 0, 40]]))
    files = _pickles(tmp_path, [GT, GT], [_bad(), dt])
    with pytest.raises(ValueError, match=r"dt_annos\[1\]\['location'\]\[1\] = \[nan, 0.0, 40.0\] is not finite"):
        read_checked(files[1], files[3], set())
    proc = _run_cli(files, str(tmp_path))
    assert proc.returncode == 2 and "dt_annos[1]['location'][1]" in proc.stderr and 'Traceback' not in proc.stderr
    with open(files[1], 'wb') as f:           # a truncated GT pickle
        f.write(pickle.dumps([GT, GT])[:100])
    with pytest.raises(ValueError, match=r"--gt-annos '.*gt.pkl': cannot read the pickle"):
        read_checked(files[1], files[3], set())


class _Sleeps(object):
    """Unpickles as a 60 s sleep: a reader that is still reading when it is killed (a small file would often
    be read before the kill, and the test would race)."""

    def __reduce__(self):
        import time
        return (time.sleep, (60,))


def test_a_worker_killed_is_named_not_waited_for(tmp_path, workers):
    gts, _ = _random_set(50)
    files = _pickles(tmp_path, gts, [_Sleeps()])

    def kill_dt_reader():
        for child in multiprocessing.active_children():
            if child.name.endswith('--dt-annos'):
                os.kill(child.pid, signal.SIGKILL)     # as the kernel's OOM killer would
                child.join()

    with pytest.raises(RuntimeError, match=r"reading --dt-annos '.*dt.pkl' ended \(exit code -9\) without a "
                                           r"result.*KRADAR_EVAL_LOAD_WORKERS=0"):
        read_checked(files[1], files[3], set(), meanwhile=kill_dt_reader, trusted=True)
    assert multiprocessing.active_children() == []


class _Exits(object):
    """Unpickles as a call of sys.exit: a BaseException no reader turns into a ValueError."""

    def __reduce__(self):
        return (sys.exit, (3,))


def test_a_worker_error_comes_back_with_its_traceback(tmp_path, workers):
    files = _pickles(tmp_path, [GT], [_Exits()])
    with pytest.raises(RuntimeError, match=r"(?s)reading --dt-annos .* failed: SystemExit: 3\nTraceback.*load_file"):
        read_checked(files[1], files[3], set(), trusted=True)


def test_checked_side_must_cover_what_the_evaluation_reads():
    side = check_side([GT], 'gt_annos', optional=set())
    assert side.fields == frozenset() and 'gt_annos.bbox' not in side.repairs
    det = check_side([_bad()], 'dt_annos', optional=set())
    with pytest.raises(ValueError, match=r"gt_annos: a CheckedSide of gt_annos with fields \[\] cannot stand for "
                                         r"gt_annos needing \['bbox', 'occluded', 'truncated'\]"):
        KRadarEvaluator(['Sedan'], 'legacy').evaluate_gathered(side, det)
    with pytest.raises(ValueError, match='a CheckedSide of dt_annos'):
        KRadarEvaluator(['Sedan'], 'fixed').evaluate_gathered(det, det)
    with pytest.raises(ValueError, match="side must be 'gt_annos' or 'dt_annos'"):
        check_side([GT], 'gt')
    (ev,), _ = KRadarEvaluator(['Sedan'], 'fixed').evaluate_gathered(side, det)
    assert ev.ap['bev'].shape[-1] == 3


def test_the_collector_pauses_only_while_reading(tmp_path):
    files = _pickles(tmp_path, [GT], [_bad()])
    assert gc.isenabled()
    assert len(safe_load.load_file(files[1], '--gt-annos')) == 1 and gc.isenabled()
    gc.disable()
    try:
        safe_load.load_file(files[1], '--gt-annos')
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError, match="--gt-annos 'nope.pkl': no such file"):
        safe_load.load_file('nope.pkl', '--gt-annos')
    assert gc.isenabled()


def test_infos_and_results_read_by_workers_as_in_process(tmp_path, monkeypatch):
    from tests.evaluation.test_kradar_columns import CLASSES, _frames
    infos, results = _frames(200, seed=4)
    paths = []
    for name, obj in (('infos.pkl', {'infos': infos}), ('results.pkl', results)):
        paths.append(str(tmp_path / name))
        with open(paths[-1], 'wb') as f:
            pickle.dump(obj, f, protocol=2)
    argv = ['--infos', paths[0], '--results', paths[1], '--classes'] + list(CLASSES) + [
        '--protocol', 'all', '--box-convention', 'mmdet3d<1.0', '--eval-types', 'bev', '3d']
    out = {}
    for value in ('0', '1'):
        monkeypatch.setenv(settings.EVAL_LOAD_WORKERS, value)
        proc = _run_cli(argv, str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        out[value] = proc.stdout
    assert out['0'] == out['1'] and 'Pedestrian bev' in out['1']
    results[150] = {'boxes_3d': np.ones((1, 7)), 'scores_3d': [np.nan], 'labels_3d': [0]}
    with open(paths[1], 'wb') as f:
        pickle.dump(results, f, protocol=2)
    proc = _run_cli(argv, str(tmp_path))        # still LOAD_WORKERS=1
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr
    assert 'results[150]: scores_3d[0] = nan is not finite' in proc.stderr


def _read_in_daemon(paths, queue):
    gt, dt = read_checked(paths[0], paths[1], set(), meanwhile=lambda: queue.put('meanwhile'))
    queue.put((gt.n_frames, dt.n_frames))


def test_a_daemonic_process_reads_in_process(tmp_path, workers):
    """multiprocessing forbids a daemonic process (a DataLoader worker, say) to have children."""
    files = _pickles(tmp_path, [GT] * 3, [_bad()] * 3)
    context = multiprocessing.get_context('fork')
    queue = context.Queue()
    process = context.Process(target=_read_in_daemon, args=((files[1], files[3]), queue), daemon=True)
    process.start()
    assert gather(queue, [process], 1) == [(3, 3)]      # no 'meanwhile': read in the process itself
