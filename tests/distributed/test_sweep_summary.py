"""The checkpoint sweep's record, summary, plot and loop, framework-free (one process, plain callables for
loading and evaluating; the real runners are in tests/adapters/mmcv1/test_sweep_launch.py)."""
import json
import os.path as osp

import pytest

from kradar_plugin.distributed.sweep.loop import CheckpointSweep
from kradar_plugin.distributed.sweep.plan import SweepRequest
from kradar_plugin.distributed.sweep.record import SweepRecord
from kradar_plugin.distributed.sweep.summary import best_entry, headline_keys, parse_key, summarize, table

OURS = {'pts_bbox/Sedan/bev@0.3': 50.0, 'pts_bbox/Sedan/bev@0.5': 40.0, 'pts_bbox/Sedan/3d@0.3': 45.0,
        'pts_bbox/Sedan/bev@0.3/0-30m': 70.0, 'pts_bbox/Bus or Truck/bev@0.3': 20.0,
        'pts_bbox/Bus or Truck/3d@0.3': 10.0, 'pts_bbox/Overall/bev@0.3': 35.0,
        'pts_bbox/kradar/Sedan_BEV_easy_strict': 50.0}
ECHO = {'pts_bbox/kradar/Sedan_2D_easy_strict': 1.0, 'pts_bbox/kradar/Sedan_3D_easy_strict': 30.0,
        'pts_bbox/kradar/Sedan_BEV_easy_strict': 33.0, 'pts_bbox/kradar/Sedan_BEV_moderate_strict': 31.0,
        'pts_bbox/kradar/Sedan_BEV_easy_loose': 12.0}


def test_headline_keys_of_the_plugins_metric_names():
    assert list(headline_keys(OURS).items()) == [
        ('Sedan BEV', 'pts_bbox/Sedan/bev@0.3'), ('Sedan 3D', 'pts_bbox/Sedan/3d@0.3'),
        ('Bus or Truck BEV', 'pts_bbox/Bus or Truck/bev@0.3'), ('Bus or Truck 3D', 'pts_bbox/Bus or Truck/3d@0.3')]


def test_headline_keys_of_echofusions_metric_names_and_of_other_datasets():
    assert list(headline_keys(ECHO).items()) == [('Sedan BEV', 'pts_bbox/kradar/Sedan_BEV_easy_strict'),
                                                 ('Sedan 3D', 'pts_bbox/kradar/Sedan_3D_easy_strict')]
    assert list(headline_keys({'toy/mae': 0.3, 'note': 'text', 'toy/n': 9})) == ['toy/mae', 'toy/n']


def test_key_rules():
    assert parse_key('Sedan BEV') == ('Sedan BEV', 'greater')
    assert parse_key('toy/mae') == ('toy/mae', 'less')
    assert parse_key('toy/mae:max') == ('toy/mae', 'greater')
    assert parse_key('pts_bbox/Sedan/3d@0.3:min') == ('pts_bbox/Sedan/3d@0.3', 'less')


def entries(*values, key='pts_bbox/Sedan/bev@0.3'):
    record = SweepRecord()
    for epoch, value in enumerate(values, 1):
        if value is None:
            record.add('/w/epoch_{}.pth'.format(epoch), 'failed', epoch=epoch, stage='load', error='bad')
        else:
            record.add('/w/epoch_{}.pth'.format(epoch), 'ok', epoch=epoch,
                       metrics=dict(OURS, **{key: value, 'pts_bbox/Sedan/3d@0.3': 100 - value}))
    return record.entries


def test_best_by_the_default_key_a_headline_name_or_a_lower_is_better_key():
    es = entries(10.0, None, 30.0, 30.0, 20.0)
    s = summarize(es)
    assert s['eval_key'] == 'pts_bbox/Sedan/bev@0.3' and s['key_source'] == 'headline Sedan BEV'
    assert s['best']['stem'] == 'epoch_3' and s['best']['value'] == 30.0   # the earliest of equal values
    assert summarize(es, 'Sedan 3D')['best']['stem'] == 'epoch_1'
    assert summarize(es, 'Sedan 3D:min')['best']['stem'] == 'epoch_3'
    assert best_entry(es, 'no/such/key') is None and summarize(es, 'no/such/key')['best'] is None


def test_table_marks_the_best_row_and_shows_failures_empty():
    es = entries(10.0, None, 30.0)
    text = table(es, summarize(es))
    lines = text.splitlines()
    assert lines[0].split()[:3] == ['checkpoint', 'epoch', 'status'] and 'Sedan BEV' in lines[0]
    assert lines[2].split()[:4] == ['epoch_1', '1', 'ok', '10.0000']
    assert lines[3].split() == ['epoch_2', '2', 'failed']
    assert lines[4].split()[:5] == ['epoch_3', '*', '3', 'ok', '30.0000']


def test_record_round_trip_and_done_means_same_file_succeeded(tmp_path):
    path = str(tmp_path / 'sweep.json')
    record = SweepRecord(path)
    record.add('/w/epoch_1.pth', 'ok', epoch=1, state=(10, 5.0), metrics={'a': 1, 'b': 'x', 'c': True})
    record.add('/w/epoch_2.pth', 'failed', epoch=2, state=(10, 6.0), stage='evaluate', error='boom')
    record.save({'best': None})
    again = SweepRecord.load(path)
    assert again.entries == record.entries and again.entries[0]['metrics'] == {'a': 1.0}
    assert again.is_done('/w/epoch_1.pth', (10, 5.0)) and not again.is_done('/w/epoch_1.pth', (11, 5.0))
    assert not again.is_done('/w/epoch_2.pth')          # a failed checkpoint is tried again
    data = json.load(open(path))
    assert data['evaluated'] == 2 and data['failed'] == 1 and data['all_succeeded'] is False


class FakeRun(object):
    """Loading and evaluating by plain callables: ``bad_load``/``bad_eval`` name checkpoints that fail."""

    def __init__(self, bad_load=(), bad_eval=()):
        self.bad_load, self.bad_eval, self.calls = set(bad_load), set(bad_eval), []

    def load(self, path):
        self.calls.append(('load', osp.basename(path)))
        if osp.basename(path) in self.bad_load:
            raise RuntimeError('cannot read {}'.format(path))
        return dict(epoch=None, loaded_fraction=1.0)

    def evaluate(self, path, epoch, tag):
        self.calls.append(('evaluate', tag))
        if osp.basename(path) in self.bad_eval:
            return {}, 'ValueError: planted'
        return {'pts_bbox/Sedan/bev@0.3': float(epoch * 10), 'pts_bbox/Sedan/3d@0.3': float(epoch)}, None


def checkpoints(tmp_path, n):
    ckpts = tmp_path / 'ckpts'
    ckpts.mkdir(exist_ok=True)
    for i in range(1, n + 1):
        (ckpts / 'epoch_{}.pth'.format(i)).write_bytes(b'w')
    return ckpts


def test_the_loop_records_failures_goes_on_and_writes_the_summary(tmp_path):
    pytest.importorskip('matplotlib')
    ckpts = checkpoints(tmp_path, 4)
    run = FakeRun(bad_load={'epoch_2.pth'}, bad_eval={'epoch_3.pth'})
    sweep = CheckpointSweep(SweepRequest(checkpoints=[str(ckpts / '*.pth')]), str(tmp_path / 'work'))
    record = sweep.run(run.load, run.evaluate)
    assert [c for c in run.calls if c[0] == 'evaluate'] == [('evaluate', 'epoch_1'), ('evaluate', 'epoch_3'),
                                                            ('evaluate', 'epoch_4')]
    assert [(e['stem'], e['status'], e['stage']) for e in record.entries] == [
        ('epoch_1', 'ok', None), ('epoch_2', 'failed', 'load'), ('epoch_3', 'failed', 'evaluate'),
        ('epoch_4', 'ok', None)]
    assert 'cannot read' in record.entries[1]['error'] and '[rank 0/1]' in record.entries[1]['error']
    data = json.load(open(str(tmp_path / 'work' / 'sweep.json')))
    assert data['best']['stem'] == 'epoch_4' and data['failed'] == 2
    assert osp.getsize(str(tmp_path / 'work' / 'sweep_ap.png')) > 1000
    assert sweep.outcome == (4, 2) and not sweep.all_succeeded
    assert sweep.exit_message().startswith('kradar_plugin sweep: 2 of 4 checkpoint(s) failed')


def test_stop_on_error_ends_the_sweep_at_the_first_failure(tmp_path):
    ckpts = checkpoints(tmp_path, 3)
    run = FakeRun(bad_load={'epoch_2.pth'})
    sweep = CheckpointSweep(SweepRequest(checkpoints=[str(ckpts / '*.pth')], stop_on_error=True),
                            str(tmp_path / 'work'))
    record = sweep.run(run.load, run.evaluate)
    assert [e['stem'] for e in record.entries] == ['epoch_1', 'epoch_2'] and sweep.outcome == (2, 1)
    assert sweep.stopped_early == 'stopped at the first failure (stop_on_error)'


class SleepClock(object):
    def __init__(self):
        self.now, self.sleeps = 0.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_a_restarted_watcher_skips_what_it_evaluated_and_stops_at_the_final_epoch(tmp_path):
    ckpts = checkpoints(tmp_path, 2)
    work = str(tmp_path / 'work')
    clock = SleepClock()
    request = SweepRequest(watch=str(ckpts), watch_idle_s=30, watch_poll_s=10, final_epoch=3)
    first = FakeRun()
    sweep = CheckpointSweep(request, work, sleep=clock.sleep, clock=clock)
    sweep.run(first.load, first.evaluate)   # 2 checkpoints, then 30 s idle (on the controlled clock)
    assert [c[1] for c in first.calls if c[0] == 'evaluate'] == ['epoch_1', 'epoch_2']
    assert clock.sleeps == [10, 10, 10, 10] and sweep.outcome == (2, 0)   # first sight, settled, 3 idle looks
    (ckpts / 'epoch_3.pth').write_bytes(b'w')
    second = FakeRun()
    sweep = CheckpointSweep(request, work, sleep=clock.sleep, clock=clock)
    record = sweep.run(second.load, second.evaluate)
    assert [c[1] for c in second.calls if c[0] == 'evaluate'] == ['epoch_3']   # 1 and 2 skipped
    assert [e['stem'] for e in record.entries] == ['epoch_1', 'epoch_2', 'epoch_3'] and sweep.all_succeeded


def test_a_pattern_that_matches_nothing_stops_the_sweep_before_any_load(tmp_path):
    run = FakeRun()
    sweep = CheckpointSweep(SweepRequest(checkpoints=[str(tmp_path / 'nothing_*.pth')]), str(tmp_path / 'work'))
    with pytest.raises(ValueError, match='kradar_plugin sweep: no checkpoint matches'):
        sweep.run(run.load, run.evaluate)
    assert run.calls == []


def test_a_relaunched_sweep_skips_the_checkpoints_it_finished_for_the_same_evaluation(tmp_path):
    ckpts = checkpoints(tmp_path, 4)
    work = str(tmp_path / 'work')
    request = SweepRequest(checkpoints=[str(ckpts / '*.pth')])
    key = [{'ann_file': 'val.pkl', 'length': 10, 'pipeline': 'abc'}]
    first = FakeRun(bad_eval={'epoch_3.pth'})
    CheckpointSweep(request, work, resume=True, evaluation=key).run(first.load, first.evaluate)
    again = FakeRun()
    sweep = CheckpointSweep(request, work, resume=True, evaluation=key)
    record = sweep.run(again.load, again.evaluate)
    assert [c[1] for c in again.calls if c[0] == 'evaluate'] == ['epoch_3']   # 1, 2 and 4 finished
    assert [(e['stem'], e['status']) for e in record.entries] == [
        ('epoch_1', 'ok'), ('epoch_2', 'ok'), ('epoch_4', 'ok'), ('epoch_3', 'ok')] and sweep.all_succeeded
    assert json.load(open(osp.join(work, 'sweep.json')))['best']['stem'] == 'epoch_4'
    # a rewritten checkpoint, another evaluation, or resuming turned off: evaluated again
    (ckpts / 'epoch_2.pth').write_bytes(b'new weights')
    third = FakeRun()
    CheckpointSweep(request, work, resume=True, evaluation=key).run(third.load, third.evaluate)
    assert [c[1] for c in third.calls if c[0] == 'evaluate'] == ['epoch_2']
    for sweep in (CheckpointSweep(request, work, resume=True, evaluation=[dict(key[0], length=9)]),
                  CheckpointSweep(request, work, resume=False, evaluation=key)):
        run = FakeRun()
        sweep.run(run.load, run.evaluate)
        assert len([c for c in run.calls if c[0] == 'evaluate']) == 4
    # a list with fewer checkpoints keeps only its own in the record
    fewer = CheckpointSweep(SweepRequest(checkpoints=[str(ckpts / 'epoch_1.pth')]), work, resume=True, evaluation=key)
    assert [e['stem'] for e in fewer.run(FakeRun().load, FakeRun().evaluate).entries] == ['epoch_1']
