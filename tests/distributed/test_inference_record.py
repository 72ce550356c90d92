"""The partial inference record and the inference session, in process: records written, torn and foreign
ones, the safe reading, resume over another batch layout, failures named from DataLoader workers too, and
opt-in skipping. The launches through the real runners are in tests/project/test_inference_records.py."""
import os
import os.path as osp
import pickle

import numpy as np
import pytest

from kradar_plugin.distributed import inference_record as records
from kradar_plugin.distributed.inference_session import (InferenceSession, Options, SkipLimitError, plan)
from kradar_plugin.distributed.sample_identity import describe, identify

torch = pytest.importorskip('torch')
FP = records.fingerprint('w1', 'infos.pkl', 10, 'Compose(Load at 0x7f00)')


def kradar_info(i):
    return {'annos': {'label_file': '3,{:05d}_{:05d}.txt'.format(i, i + 4)},
            'radar': {'bev_path': 'radar_bev/bev_{:05d}.npy'.format(i)}, 'image': {'image_idx': i}}


class Frames(object):
    """A K-Radar-like dataset whose sample ``bad`` raises while loading; sample i is i * 1.5."""

    def __init__(self, size=10, bad=()):
        self.data_infos = [kradar_info(i) for i in range(size)]
        self.data_root = 'data/kradar'
        self.bad = set(bad)
        self.loaded = []

    def __len__(self):
        return len(self.data_infos)

    def __getitem__(self, i):
        self.loaded.append(i)
        if i in self.bad:
            raise ValueError('EOF: reading array header, expected 118 bytes got 90')
        return torch.tensor([i * 1.5])


def loader(dataset, rank=0, world=1, workers=0, batch=3):
    sampler = torch.utils.data.DistributedSampler(dataset, world, rank, shuffle=False)
    return torch.utils.data.DataLoader(dataset, batch_size=batch, sampler=sampler, num_workers=workers)


def infer_all(session, model=lambda x: [float(v) * 2 for v in x.reshape(-1)]):
    """What mmcv's test loop does: every batch through the model (here: the session's run_batch)."""
    out = []
    for data in session.batches(lambda group: None):
        out.extend(session.run_batch(lambda: model(data)))
    return out


def session(tmp_path, dataset, options=None, **kw):
    return InferenceSession(loader(dataset, **kw), str(tmp_path / 'rec'), FP, options or Options(interval_samples=2),
                            rank=kw.get('rank', 0), world=kw.get('world', 1)).begin()


def test_identity_of_a_kradar_frame_and_of_other_infos():
    fields = dict(identify(Frames(), 7))
    assert fields['label_file'] == '3,00007_00011.txt' and fields['sequence'] == '3'
    assert fields['sensor indices'] == 'radar 00007, os2-64 00011'
    assert fields['radar.bev_path'] == osp.join('data/kradar', '3', 'radar_bev/bev_00007.npy')
    other = type('D', (), {'data_infos': [{'token': 'abc', 'lidar_points': {'lidar_path': 'x/1.bin'},
                                            'num': 3.5}]})()
    assert identify(other, 0) == [('token', 'abc'), ('lidar_points.lidar_path', 'x/1.bin')]
    assert describe(4, []) == 'dataset index 4'


def test_records_round_trip_and_a_torn_last_write(tmp_path):
    writer = records.RecordWriter(str(tmp_path), FP, 0, 2, interval_samples=2)
    writer.add([0, 2], [{'b': np.arange(3.0)}, {'b': np.ones(2, np.float32)}])
    writer.flush()
    writer.add([4], [{'b': np.zeros(1)}])
    writer.close()
    state = records.read_records(str(tmp_path), FP)
    assert sorted(state.done) == [0, 2, 4] and state.torn == [] and state.foreign == []
    assert state.done[2]['b'].dtype == np.float32
    with open(writer.path, 'r+b') as f:      # the last write cut short (a kill in the middle of it)
        f.truncate(os.path.getsize(writer.path) - 5)
    state = records.read_records(str(tmp_path), FP)
    assert sorted(state.done) == [0, 2] and state.torn[0][0] == writer.path
    data = bytearray(open(writer.path, 'rb').read())
    data = data[:len(data) - records._chunks(bytes(data))[1]]
    data[-20] ^= 1                                     # a flipped byte in the last whole chunk: the digest tells
    open(writer.path, 'wb').write(bytes(data))
    assert records.read_records(str(tmp_path), FP).done == {}


def test_a_record_of_another_evaluation_is_never_mixed_in(tmp_path):
    records.RecordWriter(str(tmp_path), records.fingerprint('w2', 'infos.pkl', 10, 'Compose(Load at 0x1)'),
                         0, 1).close()
    state = records.read_records(str(tmp_path), FP)
    assert state.done == {} and state.foreign[0][1] == 'the checkpoint content differs'
    # the pipeline text modulo object addresses is the same pipeline
    assert records.mismatch(FP, records.fingerprint('w1', 'infos.pkl', 10, 'Compose(Load at 0x2)')) == ''


def test_reading_a_record_runs_no_code(tmp_path):
    class Boom(object):
        def __reduce__(self):
            return (os.system, ('touch {}'.format(tmp_path / 'ran'),))
    data = pickle.dumps({'kind': 'header', 'fingerprint': FP})
    evil = pickle.dumps({'kind': 'samples', 'indices': [0], 'results': [Boom()]})
    with open(str(tmp_path / 'x.krrec'), 'wb') as f:
        for body in (data, evil):
            f.write(records._HEAD.pack(records.MAGIC, len(body), records.hashlib.sha256(body).digest()) + body)
    state = records.read_records(str(tmp_path), FP)
    assert not (tmp_path / 'ran').exists() and state.done == {} and state.torn


def test_plan_keeps_batches_and_infers_only_the_missing():
    groups = plan([[0, 2, 4], [6, 8]], {2: 'r2', 6: 'r6', 8: 'r8'})
    assert [(g.indices, g.recorded) for g in groups] == [([0], None), ([2], ['r2']), ([4], None),
                                                         ([6, 8], ['r6', 'r8'])]


@pytest.mark.parametrize('workers', [0, 1])
def test_failure_names_the_sample_and_a_relaunch_infers_only_the_rest(tmp_path, workers):
    bad = Frames(bad={7})
    with pytest.raises(ValueError) as info:
        infer_all(session(tmp_path, bad, workers=workers))
    text = '\n'.join(getattr(info.value, '__notes__', []))
    assert 'dataset index 7 (label_file 3,00007_00011.txt' in text and 'bev_00007.npy' in text, text
    assert 'EOF: reading array header' in str(info.value)
    state = records.read_records(str(tmp_path / 'rec'), FP)
    assert sorted(state.done) == [0, 1, 2, 3, 4, 5] and state.failures[7]['type'] == 'ValueError'
    # fixed, relaunched with two ranks: each infers only its missing samples; equal to an uninterrupted run
    fixed = [Frames(), Frames()]
    parts = [infer_all(session(tmp_path, fixed[r], rank=r, world=2, workers=workers)) for r in range(2)]
    if workers == 0:
        assert sorted(fixed[0].loaded + fixed[1].loaded) == [6, 7, 8, 9]
    assert parts == [[i * 3.0 for i in range(0, 10, 2)], [i * 3.0 for i in range(1, 10, 2)]]


def test_skipping_keeps_ranks_in_step_and_stops_past_the_limit(tmp_path):
    s = session(tmp_path, Frames(bad={1, 4}), Options(skip_max=2))
    assert infer_all(s) == [0.0, None, 6.0, 9.0, None, 15.0, 18.0, 21.0, 24.0, 27.0]
    assert [f['index'] for f in s.excluded] == [1, 4] and s.excluded[0]['identity'][0] == ['label_file',
                                                                                           '3,00001_00005.txt']
    with pytest.raises(ValueError) as info:     # this rank alone is past the limit: at once, naming all three
        infer_all(session(tmp_path / 'b', Frames(bad={1, 4, 5}), Options(skip_max=2)))
    assert '3 samples failed, more than --skip-bad-samples allows (2)' in info.value.__notes__[0]
    assert all('dataset index {} '.format(i) in info.value.__notes__[0] for i in (1, 4, 5))
    # the ranks together past it (each rank under it): every rank stops after the loop, naming all
    two = [session(tmp_path / 'c', Frames(bad={1, 4}), Options(skip_max=1), rank=r, world=2) for r in range(2)]
    for s in two:
        s.gather = lambda mine: [f for t in two for f in [t.failures]]
    infer_all(two[0])
    with pytest.raises(SkipLimitError, match='2 samples failed.*dataset index 1 .*dataset index 4 '):
        infer_all(two[1])


def test_forward_failure_retried_per_sample_when_skipping(tmp_path):
    def model(x):
        if 3.0 * 1.5 in [float(v) for v in x.reshape(-1)]:
            raise RuntimeError('CUDA out of memory (planted)')
        return [float(v) * 2 for v in x.reshape(-1)]
    s = session(tmp_path, Frames(), Options(skip_max=1))
    out = []
    for data in s.batches(lambda g: None):
        out.extend(s.run_batch(lambda: model(data), lambda i: model(torch.tensor([i * 1.5]))[0]))
    assert out == [0.0, 3.0, 6.0, None, 12.0, 15.0, 18.0, 21.0, 24.0, 27.0]
    assert s.excluded[0]['stage'] == 'inference'


def test_auto_skip_limit_is_one_percent():
    assert Options(skip_max='auto').limit(17535) == 175


def test_sigterm_during_inference_flushes_the_record_then_the_previous_handler_runs(tmp_path):
    """The launcher stops a rank with SIGTERM after another failed: the record is flushed first, then the
    previous handler runs (here a recorder; by default the process ends); after inference it is back."""
    import os
    import signal
    calls = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: calls.append(signum))
    mine = signal.getsignal(signal.SIGTERM)
    try:
        s = session(tmp_path, Frames(), Options(interval_samples=100, interval_s=1e6))   # no periodic flush
        walk = s.batches(lambda group: None)
        for n, data in enumerate(walk):
            s.run_batch(lambda: [float(v) * 2 for v in data.reshape(-1)])
            if n == 1:
                assert signal.getsignal(signal.SIGTERM) is not mine
                os.kill(os.getpid(), signal.SIGTERM)
                break
        assert calls == [signal.SIGTERM] and signal.getsignal(signal.SIGTERM) is mine
        assert sorted(records.read_records(str(tmp_path / 'rec'), FP).done) == [0, 1, 2, 3, 4, 5]
        walk.close()
        # an inference that ends normally puts the handler back too
        infer_all(session(tmp_path / 'b', Frames()))
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)
