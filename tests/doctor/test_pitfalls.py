"""The distributed-pitfall checks on real objects: mmdet/torch samplers for two ranks, real DataLoaders with
fork and spawn workers, a transform holding a lambda, CUDA touched in a worker and at import, a model with
an unused head, a process left running and a /dev/shm segment left by killed processes. Each check is
shown to FAIL (or WARN) on the broken case and to pass on the healthy one; where the pitfall has a real
failure on this machine, that failure is produced too (the check predicts it, not just pattern-matches)."""
import functools
import glob
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

torch = pytest.importorskip('torch')  # the light environment (numpy 2, no torch) runs tests/doctor too
pytest.importorskip('mmcv.parallel')
pytest.importorskip('mmdet.datasets')

from mmcv.parallel import collate, scatter_kwargs  # noqa: E402
from torch.utils.data import DataLoader, DistributedSampler as TorchDistributedSampler, RandomSampler  # noqa: E402

from kradar_plugin.doctor import pitfalls as P  # noqa: E402
from tests.adapters.mmcv1.fixture_components import ToyEvalDataset, ToyRegressor  # noqa: E402
from tests.adapters.mmcv1.fixture_pitfalls import (ToyPipelineDataset, ToyRankUnawareSampler,  # noqa: E402
                                                   ToyTwoHeadRegressor)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def loader(dataset, sampler=None, workers=0, context=None, batch=2):
    return DataLoader(dataset, batch_size=batch, sampler=sampler, num_workers=workers,
                      collate_fn=functools.partial(collate, samples_per_gpu=batch), multiprocessing_context=context)


# ------------------------------------------------------------------------------------------ sampler
def per_rank(make, world=2, size=40, batch=2, flag=None):
    def dataset():
        ds = ToyEvalDataset(num_samples=size)
        if flag is not None:
            ds.flag = flag
        return ds
    loaders = [loader(dataset(), make(dataset(), r, world), batch=batch) for r in range(world)]
    return [P.sampler_draws(dl) for dl in loaders], P.describe_sampler(loaders[0].sampler)


def test_rank_aware_samplers_pass():
    import numpy as np
    from mmdet.datasets.samplers import DistributedGroupSampler, DistributedSampler
    for make in (lambda ds, r, w: DistributedGroupSampler(ds, 2, num_replicas=w, rank=r, seed=3),
                 lambda ds, r, w: DistributedSampler(ds, num_replicas=w, rank=r, shuffle=True, seed=3),
                 lambda ds, r, w: TorchDistributedSampler(ds, num_replicas=w, rank=r, shuffle=False)):
        draws, text = per_rank(make)
        assert not set(draws[0]) & set(draws[1]) and len(draws[0]) == 20  # disjoint halves
        r = P.judge_sampler('train', draws, 40, text, 2)
        assert r.status == 'OK', r
    # two aspect-ratio groups of odd sizes: DistributedGroupSampler pads each group (shared draws), still a split
    flag = np.array([0] * 23 + [1] * 27, dtype=np.uint8)
    draws, text = per_rank(lambda ds, r, w: DistributedGroupSampler(ds, 4, num_replicas=w, rank=r), size=50,
                           batch=4, flag=flag)
    assert set(draws[0]) & set(draws[1])  # padding repeats samples across ranks
    assert P.judge_sampler('train', draws, 50, text, 4).status == 'OK'


def test_rank_unaware_samplers_fail():
    # a custom sampler that ignores rank: both ranks draw the same permutation
    draws, text = per_rank(lambda ds, r, w: ToyRankUnawareSampler(ds, num_replicas=w, rank=r))
    assert draws[0] == draws[1]
    r = P.judge_sampler('train', draws, 40, text, 2)
    assert r.status == 'FAIL' and 'ToyRankUnawareSampler (not a DistributedSampler) is not rank-aware' in r.reason
    assert 'every rank draws the same 40 indices per epoch' in r.reason and 'DistributedSampler' in r.fix
    # torch's RandomSampler with a different seed per rank: different orders, each the whole dataset
    draws, text = per_rank(lambda ds, r, w: RandomSampler(ds, generator=torch.Generator().manual_seed(r)))
    assert draws[0] != draws[1]
    r = P.judge_sampler('train', draws, 40, text, 2)
    assert r.status == 'FAIL' and 'each of the 2 ranks draws all 40 samples per epoch' in r.reason
    # a DistributedSampler built for one replica in a two-process job
    draws, text = per_rank(lambda ds, r, w: TorchDistributedSampler(ds, num_replicas=1, rank=0))
    r = P.judge_sampler('train', draws, 40, text, 2)
    assert r.status == 'FAIL' and 'num_replicas=1' in r.reason


def test_endless_samplers_of_iteration_based_runners():
    from mmdet.datasets.samplers import InfiniteBatchSampler, InfiniteGroupBatchSampler
    ds = ToyEvalDataset(num_samples=40)

    def draws(make):
        out = []
        for r in range(2):
            dl = DataLoader(ds, batch_sampler=make(r), num_workers=0, collate_fn=functools.partial(collate,
                                                                                                 samples_per_gpu=2))
            out.append(P.sampler_draws(dl))
        return out
    aware = draws(lambda r: InfiniteGroupBatchSampler(ds, 2, world_size=2, rank=r, seed=1))
    assert len(aware[0]) > 40  # endless
    assert P.judge_sampler('train', aware, 40, 'InfiniteGroupBatchSampler', 2).status == 'OK'
    unaware = draws(lambda r: InfiniteBatchSampler(ds, 2, world_size=1, rank=0, seed=1))
    r = P.judge_sampler('train', unaware, 40, 'InfiniteBatchSampler', 2)
    assert r.status == 'FAIL' and 'endless stream' in r.reason


def test_padding_of_a_distributed_sampler_is_not_an_overlap():
    # 5 samples on 2 ranks: DistributedSampler pads rank 1 with sample 0 -> one shared index
    draws = [P.sampler_draws(loader(ToyEvalDataset(num_samples=5), TorchDistributedSampler(
        ToyEvalDataset(num_samples=5), num_replicas=2, rank=r, shuffle=False), batch=1)) for r in range(2)]
    assert draws == [[0, 2, 4], [1, 3, 0]]
    assert P.judge_sampler('train', draws, 5, 'DistributedSampler', 1).status == 'OK'
    # 3 samples, batches of 4: padding hands each rank every sample, a rank-aware sampler all the same
    from mmdet.datasets.samplers import DistributedGroupSampler
    draws, text = per_rank(lambda ds, r, w: DistributedGroupSampler(ds, 4, num_replicas=w, rank=r), size=3,
                           batch=4)
    r = P.judge_sampler('train', draws, 3, text, 4)
    assert r.status == 'OK' and 'too few samples to tell' in r.reason


def test_validation_sampler_must_give_the_exact_order():
    ds = ToyEvalDataset(num_samples=9)
    whole = [P.sampler_draws(loader(ds)) for _ in range(2)]  # no sampler: every rank the whole set
    r = P.judge_val_sampler('val', whole, 9, 'no sampler (sequential)')
    assert r.status == 'FAIL' and 'hands every rank the whole dataset (9 samples on each of 2 ranks)' in r.reason
    good = [P.sampler_draws(loader(ds, TorchDistributedSampler(ds, 2, r, shuffle=False))) for r in range(2)]
    assert P.judge_val_sampler('val', good, 9, 'DistributedSampler').status == 'OK'


def test_drawing_indices_leaves_the_global_rng_alone():
    ds = ToyEvalDataset(num_samples=10)
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    P.sampler_draws(loader(ds, RandomSampler(ds)))  # RandomSampler draws its seed from the global RNG
    assert torch.equal(torch.rand(3), expected)


# ------------------------------------------------------------------------------------------ pickling
def lambda_dataset():
    return ToyPipelineDataset(num_samples=4, pipeline=[dict(type='ToyScaleLambda', factor=2.0)])


def module_function_dataset():
    return ToyPipelineDataset(num_samples=4, pipeline=[dict(type='ToyScale', factor=2.0)])


def test_lambda_in_the_pipeline_fails_under_spawn_and_the_real_loader_fails_too():
    dl = loader(lambda_dataset(), workers=1, context='spawn')
    r = P.judge_pickling('train', dl)
    assert r.status == 'FAIL', r
    assert 'dataset.pipeline.transforms[0].fn = ToyScaleLambda.__init__.<locals>.<lambda>' in r.reason
    assert 'fixture_pitfalls.py:' in r.reason and 'module-level function' in r.fix
    with pytest.raises(Exception) as real:  # what the check predicts: starting a spawn worker fails
        next(iter(dl))
    assert 'pickle' in str(real.value).lower()
    # forkserver pickles the same way
    assert P.judge_pickling('train', loader(lambda_dataset(), workers=1, context='forkserver')).status == 'FAIL'


def test_lambda_is_fine_with_fork_and_without_workers():
    r = P.judge_pickling('train', loader(lambda_dataset(), workers=1, context='fork'))
    assert r.status == 'OK' and 'would not pickle under spawn/forkserver' in r.reason
    assert P.judge_pickling('train', loader(lambda_dataset(), workers=0)).status == 'OK'


def test_picklable_pipeline_passes_and_really_runs_in_a_spawn_worker():
    dl = loader(module_function_dataset(), workers=1, context='spawn')
    assert P.judge_pickling('train', dl).status == 'OK'
    batch = next(iter(dl))
    assert batch['x'].data[0].shape == (2, 4)


def test_unpicklable_path_through_partial_and_dicts():
    def local(x):
        return x
    payload = {'a': [1, functools.partial(print, sep=local)]}
    path, culprit, error = P.find_unpicklable(payload, 'collate_fn')
    assert path == "collate_fn['a'][1].keywords['sep']" and culprit is local
    assert P.find_unpicklable({'a': [1, 2]}, 'x') is None


# ------------------------------------------------------------------------------------------ CUDA
def test_cuda_touched_in_a_fork_worker_is_seen_with_its_call_site():
    ds = ToyPipelineDataset(num_samples=4, pipeline=[dict(type='ToyCudaTouch')])
    state = P.probe_worker_cuda(loader(ds, workers=1, context='fork'))
    assert state['pid'] != os.getpid()  # measured in the worker
    if not torch.cuda.is_available():
        assert state['initialized'] is False  # no GPU: the attempt failed, and was recorded
    assert state['attempts'] and 'fixture_pitfalls.py' in state['attempts'][0]['where']
    assert '.cuda()' in state['attempts'][0]['where']
    r = P.judge_worker_cuda('train', state, 'fork')
    assert r.status == 'FAIL' and 'Cannot re-initialize CUDA in forked subprocess' in r.reason


def test_cuda_at_import_is_repeated_by_spawn_workers():
    # the worker imports tests.adapters.mmcv1.fixture_cuda_import afresh while unpickling the dataset
    from tests.adapters.mmcv1.fixture_cuda_import import ToyCudaDefaultDataset
    state = P.probe_worker_cuda(loader(ToyCudaDefaultDataset(num_samples=4), workers=1, context='spawn'))
    assert state['attempts'] and 'fixture_cuda_import.py' in state['attempts'][0]['where'], state
    assert P.judge_worker_cuda('train', state, 'spawn').status == 'FAIL'


def test_a_cpu_only_pipeline_passes():
    state = P.probe_worker_cuda(loader(module_function_dataset(), workers=1, context='fork'))
    assert state == {'initialized': False, 'attempts': [], 'pid': state['pid']} and state['pid'] != os.getpid()
    assert P.judge_worker_cuda('train', state, 'fork').status == 'OK'
    assert P.probe_worker_cuda(loader(module_function_dataset(), workers=0)) is None


def test_import_time_cuda_in_a_fresh_interpreter():
    code = textwrap.dedent('''
        import json, sys
        sys.path.insert(0, %r)
        from kradar_plugin.doctor import pitfalls as P
        P.install_cuda_tracer()
        import %s
        print('STATE ' + json.dumps(P.cuda_state()))
    ''')
    for module, bad in (('tests.adapters.mmcv1.fixture_cuda_import', True),
                        ('tests.adapters.mmcv1.fixture_pitfalls', False)):
        out = subprocess.run([sys.executable, '-c', code % (ROOT, module)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, universal_newlines=True, cwd=ROOT, timeout=300).stdout
        import json
        state = json.loads([l for l in out.splitlines() if l.startswith('STATE ')][0][6:])
        r = P.judge_import_cuda(state)
        assert r.status == ('FAIL' if bad else 'OK'), (module, r)
        if bad:
            assert 'fixture_cuda_import.py:' in r.reason and 'tensor.cuda()' in r.reason


# ------------------------------------------------------------------------------------------ torch 1.10 DDP
@pytest.mark.parametrize('version,find_unused,static,status', [
    ('1.10.0', True, False, 'WARN'), ('1.10.2+cu113', False, True, 'WARN'), ('1.10.1', False, False, 'OK'),
    ('1.11.0', True, False, 'OK'), ('1.9.1', True, False, 'OK'), ('2.0.1', True, True, 'OK'),
    ('1.10.0', None, False, 'SKIP')])
def test_torch_110_ddp_inplace_view(version, find_unused, static, status):
    r = P.judge_ddp_view(version, find_unused, static)
    assert r.status == status, r
    if status == 'WARN':
        assert 'is a view and is being modified inplace' in r.reason and "torch>=1.11" in r.fix


# ------------------------------------------------------------------------------------------ unused parameters
def one_batch(model_cls):
    ds = ToyEvalDataset(num_samples=4)
    batch = P.first_batch(loader(ds))
    inputs, _ = scatter_kwargs((batch,), {}, [-1])
    return model_cls(), inputs[0][0]


def test_unused_head_is_named_and_the_model_is_left_as_it_was():
    model, data = one_batch(ToyTwoHeadRegressor)
    model.eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    unused = P.probe_unused_parameters(model, data)
    assert unused == ['aux_head.weight', 'aux_head.bias']
    assert all(p.grad is None for p in model.parameters()) and not model.training
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    r = P.judge_unused(unused, find_unused=False)
    assert r.status == 'FAIL' and 'aux_head (2)' in r.reason and 'Expected to have finished reduction' in r.reason
    assert P.judge_unused(unused, find_unused=True).status == 'OK'


def test_all_used_with_find_unused_costs_speed():
    model, data = one_batch(ToyRegressor)
    assert P.probe_unused_parameters(model, data) == []
    assert P.judge_unused([], find_unused=True, total=2).status == 'WARN'
    assert P.judge_unused([], find_unused=False).status == 'OK'


# ------------------------------------------------------------------------------------------ leftovers
def test_a_training_process_left_running_is_reported(tmp_path):
    script = tmp_path / 'train.py'
    script.write_text('import time\ntime.sleep(120)\n')
    proc = subprocess.Popen([sys.executable, str(script), 'configs/x.py', '--launcher', 'pytorch'])
    try:
        time.sleep(0.5)
        found = P.probe_leftovers(exclude={os.getpid()})
        mine = [p for p in found['processes'] if p['pid'] == proc.pid]
        assert mine and 'train.py configs/x.py --launcher pytorch' in mine[0]['cmd']
        # judged alone: this machine is shared, other jobs' processes may be listed too
        r = P.judge_leftovers({'processes': mine})
        assert r.status == 'WARN' and 'pid %d' % proc.pid in r.reason and 'kill %d' % proc.pid in r.fix
    finally:
        proc.kill()
        proc.wait()
    assert proc.pid not in [p['pid'] for p in P.probe_leftovers(exclude={os.getpid()})['processes']]


def test_own_job_is_not_a_leftover():
    # this process, its ancestors and its own children are the current job
    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', 'train.py'])
    try:
        time.sleep(0.3)
        assert child.pid in P.own_process_tree()
        assert child.pid not in [p['pid'] for p in P.probe_leftovers()['processes']]
    finally:
        child.kill()
        child.wait()


def test_shm_segment_left_by_killed_file_system_sharing(tmp_path):
    """file_system sharing with its torch_shm_manager killed leaves /dev/shm/torch_<pid>_* behind."""
    if not os.path.isdir('/dev/shm'):
        pytest.skip('no /dev/shm')
    code = textwrap.dedent('''
        import glob, os, signal, time, torch, torch.multiprocessing as mp
        mp.set_sharing_strategy('file_system')
        t = torch.zeros(250000).share_memory_()
        for comm in glob.glob('/proc/[0-9]*/comm'):  # only the manager this process started (its child)
            try:
                stat = open(comm[:-4] + 'stat').read()
                if open(comm).read().strip() == 'torch_shm_manag' and \
                        int(stat.rsplit(')', 1)[1].split()[1]) == os.getpid():
                    os.kill(int(comm.split('/')[2]), signal.SIGKILL)
            except (OSError, ValueError, IndexError):
                pass
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGKILL)
    ''')
    proc = subprocess.Popen([sys.executable, '-c', code])
    assert proc.wait(timeout=300) == -signal.SIGKILL
    left = set(glob.glob('/dev/shm/torch_%d_*' % proc.pid))  # this child's segments only
    try:
        assert left, 'killing the client and its manager left no segment'
        found = P.probe_leftovers(exclude={os.getpid()})
        names = [s['name'] for s in found['shm-segments']]
        assert all(os.path.basename(p) in names for p in left)
        r = P.judge_leftovers(found)
        assert r.status == 'WARN' and '/dev/shm/torch_* segment' in r.reason
    finally:
        for path in left:
            os.unlink(path)
    assert not set(os.path.basename(p) for p in left) & set(
        s['name'] for s in P.probe_leftovers(exclude={os.getpid()})['shm-segments'])


# ------------------------------------------------------------------------------------------ /dev/shm vs batches
def test_shm_against_workers_times_batches():
    ds = ToyEvalDataset(num_samples=8)
    dl = loader(ds, workers=2, batch=4)
    nbytes = P.batch_nbytes(P.first_batch(dl))
    assert nbytes == 4 * 4 * 4 + 4 * 1 * 4  # x: 4 samples x 4 float32; target: 4 x 1 float32
    demand = P.loader_shm_demand('train', dl, nbytes)
    need = 2 * 2 * nbytes * 2  # workers x prefetch x batch x 2 processes
    assert P.judge_shm_batch([demand], need - 1, need - 1, 2).status == 'FAIL'
    assert P.judge_shm_batch([demand], 10 * need, need + 1, 2).status == 'WARN'
    r = P.judge_shm_batch([demand], 10 * need, 10 * need, 2)
    assert r.status == 'OK' and '2 workers x 2 prefetch' in r.reason
    assert P.judge_shm_batch([P.loader_shm_demand('train', loader(ds), nbytes)], 1, 1).status == 'OK'


def test_the_doctor_names_the_multi_node_pitfalls_of_a_host():
    """On a host (network namespace) whose name resolves to 127.0.1.1 and without scontrol on PATH, a Slurm
    launch gets both warnings; GLOO_SOCKET_IFNAME and MASTER_ADDR set silence them. The facts are probed for
    real there (host name, hosts file, interfaces, PATH)."""
    from tests.adapters.mmcv1.fixture_hosts import two_hosts_or_skip
    hosts = two_hosts_or_skip(loopback_names=True)
    try:
        def doctor(**env):
            cmd = hosts.prefix(0) + [sys.executable, '-m', 'kradar_plugin.doctor', '--quick', '--assume',
                                     'launch=slurm']
            environ = dict(os.environ, PATH=os.path.dirname(sys.executable))   # no scontrol
            environ.pop('MASTER_ADDR', None)
            environ.update(env)
            return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=environ,
                                  universal_newlines=True, timeout=600).stdout
        out = doctor()
        assert "WARN  multi-node-host   this host's name '{}' resolves to 127.0.1.1 (loopback only)".format(
            hosts.names[0]) in out, out
        assert 'export GLOO_SOCKET_IFNAME={} on every node'.format(hosts.links[0]) in out, out
        assert 'scontrol is not on PATH' in out and 'set MASTER_ADDR' in out, out
        fixed = doctor(GLOO_SOCKET_IFNAME=hosts.links[0], MASTER_ADDR='10.250.0.1')
        assert 'OK    multi-node-host' in fixed, fixed
    finally:
        hosts.stop()
