"""The checkpoint sweep's plan (framework-free): which files, in which order, the request from config and
environment, and the watcher's decisions under a controlled clock."""
import os
import os.path as osp

import pytest

from kradar_plugin.distributed.sweep import plan as sweep_plan
from kradar_plugin.distributed.sweep.plan import SweepRequest, Watcher, expand, request_from


def touch(path, data=b'x', mtime=None):
    with open(str(path), 'wb') as f:
        f.write(data)
    if mtime is not None:
        os.utime(str(path), (mtime, mtime))
    return str(path)


def test_expand_orders_by_epoch_number_not_by_name_and_lists_each_file_once(tmp_path):
    for n in (10, 2, 1):
        touch(tmp_path / 'epoch_{}.pth'.format(n))
    os.symlink(str(tmp_path / 'epoch_10.pth'), str(tmp_path / 'latest.pth'))
    found = expand([str(tmp_path / '*.pth'), str(tmp_path / 'epoch_2.pth')])
    assert [osp.basename(p) for p in found] == ['epoch_1.pth', 'epoch_2.pth', 'epoch_10.pth']


def test_expand_names_without_a_number_come_last_by_mtime_and_missing_paths_stay(tmp_path):
    b = touch(tmp_path / 'b.pth', mtime=1000)
    a = touch(tmp_path / 'a.pth', mtime=2000)
    e = touch(tmp_path / 'iter_500.pth')
    missing = str(tmp_path / 'gone.pth')
    assert expand([a, b, e, missing]) == [e, missing, b, a]   # gone.pth: mtime 0, first of the unnumbered
    assert expand([a, missing], missing_ok=True) == [a]


def test_a_glob_that_matches_nothing_is_an_error(tmp_path):
    with pytest.raises(ValueError, match='no checkpoint matches'):
        expand([str(tmp_path / 'epoch_*.pth')])


def test_checkpoint_numbers():
    assert sweep_plan.checkpoint_number('/w/epoch_12.pth') == ('epoch', 12)
    assert sweep_plan.checkpoint_number('iter_4000.pth') == ('iter', 4000)
    assert sweep_plan.checkpoint_number('best_bbox_mAP_epoch_7.pth') == ('epoch', 7)
    assert sweep_plan.checkpoint_number('latest.pth') == (None, None)
    assert sweep_plan.stem('/w/epoch_12.pth') == 'epoch_12'


def test_request_from_config_and_environment():
    cfg = dict(eval_checkpoints='a.pth, b.pth  w/epoch_*.pth', eval_key='Sedan 3D', eval_stop_on_error='true')
    req = request_from(cfg, environ={})
    assert req.checkpoints == ['a.pth', 'b.pth', 'w/epoch_*.pth'] and req.eval_key == 'Sedan 3D'
    assert req.stop_on_error is True and req.active and req.watch is None
    env = {'KRADAR_EVAL_CHECKPOINTS': 'x.pth,y.pth', 'KRADAR_EVAL_KEY': 'toy/mae:min',
           'KRADAR_SWEEP_STOP_ON_ERROR': '0'}
    req = request_from(cfg, environ=env)
    assert req.checkpoints == ['x.pth', 'y.pth'] and req.eval_key == 'toy/mae:min' and not req.stop_on_error
    req = request_from(dict(eval_checkpoints=['a.pth']), environ={'KRADAR_EVAL_WATCH': '/w',
                                                                  'KRADAR_EVAL_WATCH_IDLE': '30',
                                                                  'KRADAR_EVAL_FINAL_EPOCH': '24'})
    assert (req.watch, req.checkpoints, req.watch_idle_s, req.final_epoch) == ('/w', [], 30.0, 24)
    assert not request_from({}, environ={}).active


def test_request_errors_name_the_setting():
    with pytest.raises(ValueError, match='KRADAR_EVAL_FINAL_EPOCH'):
        request_from({}, environ={'KRADAR_EVAL_WATCH': '/w', 'KRADAR_EVAL_FINAL_EPOCH': 'last'})
    with pytest.raises(ValueError, match='eval_watch_idle'):
        SweepRequest(watch='/w', watch_idle_s=0)
    with pytest.raises(ValueError, match='not both'):
        SweepRequest(checkpoints=['a.pth'], watch='/w')


class Clock(object):
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def watcher(tmp_path, clock, **kwargs):
    w = Watcher(str(tmp_path), idle_s=100, clock=clock, **kwargs)
    w.wall_clock = clock   # file ages measured on the same controlled clock
    return w


def test_a_checkpoint_is_due_once_unchanged_between_two_looks(tmp_path):
    clock = Clock()
    clock.now = 1000.0
    path = touch(tmp_path / 'epoch_1.pth', b'partial', mtime=999.0)
    w = watcher(tmp_path, clock, settle_s=60)
    assert w.next_due() == ('wait', None)            # first sight: maybe still being written
    touch(path, b'partial+more', mtime=1005.0)      # it grew
    clock.now = 1010.0
    assert w.next_due() == ('wait', None)
    clock.now = 1020.0
    assert w.next_due() == ('checkpoint', path)      # unchanged since the previous look
    touch(tmp_path / 'latest.pth', mtime=100.0)     # not an epoch/iter checkpoint: never offered
    w.done = lambda p, s: p == path
    w.mark_done(path)                                # the idle time restarts at 1020
    clock.now = 1119.0
    assert w.next_due() == ('wait', None)
    clock.now = 1120.0
    assert w.next_due() == ('stop', 'no new checkpoint for 100 s')


def test_an_old_checkpoint_is_due_at_first_sight_and_done_ones_are_skipped(tmp_path):
    clock = Clock()
    clock.now = 5000.0
    one = touch(tmp_path / 'epoch_1.pth', mtime=100.0)
    two = touch(tmp_path / 'epoch_2.pth', mtime=200.0)
    done = {one: sweep_plan.file_state(one)}
    w = watcher(tmp_path, clock, settle_s=60, done=lambda p, s: done.get(p) == s)
    assert w.next_due() == ('checkpoint', two)
    touch(one, b'rewritten', mtime=300.0)            # same name, new file: due again
    done[two] = sweep_plan.file_state(two)
    assert w.next_due() == ('checkpoint', one)


def test_the_watch_stops_when_idle_or_after_the_final_epoch(tmp_path):
    clock = Clock()
    w = watcher(tmp_path, clock, settle_s=60)
    clock.now = 99.0
    assert w.next_due() == ('wait', None)
    clock.now = 100.0
    assert w.next_due()[0] == 'stop' and 'no new checkpoint for 100 s' in w.next_due()[1]

    clock.now = 0.0
    three = touch(tmp_path / 'epoch_3.pth', mtime=-1000.0)
    w = watcher(tmp_path, clock, settle_s=60, final_epoch=3)
    assert w.next_due() == ('checkpoint', three)
    w.mark_done(three)
    assert w.next_due() == ('stop', 'the checkpoint of the final epoch 3 is evaluated')
    restarted = watcher(tmp_path, clock, settle_s=60, final_epoch=3, done=lambda p, s: True)
    assert restarted.next_due() == ('stop', 'the checkpoint of the final epoch 3 was evaluated before')


def test_the_sweep_modules_import_without_torch_mmcv_or_matplotlib():
    import subprocess
    import sys
    import textwrap
    root = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
    code = textwrap.dedent('''
        import sys
        class Block(object):
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('torch', 'mmcv', 'mmdet', 'mmdet3d', 'mmengine', 'matplotlib'):
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
        from kradar_plugin.distributed.sweep import loop, plan, plot, record, summary
        print('ok')
    ''')
    proc = subprocess.run([sys.executable, '-c', code], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=dict(os.environ, PYTHONPATH=root))
    assert proc.stdout.strip() == 'ok', proc.stdout
