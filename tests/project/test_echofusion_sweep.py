"""The checkpoint sweep through EchoFusion's own launcher and train script (the installed mmdet3d's
unmodified ``tools/train.py`` and ``dist_train.sh``: ``torch.distributed.launch``, 2 gloo processes), asked
for by the environment only (``KRADAR_EVAL_ONLY=1 KRADAR_EVAL_CHECKPOINTS=...``): checkpoints of a real
2-epoch training run of the project's detector, each evaluated by the project's own K-Radar evaluate in
one launch, with the same metrics as a separate eval-only launch of that checkpoint; and the same sweep
on two simulated nodes (``torch.distributed.launch --nnodes 2``, one worker each) whose second node loses its
worker to SIGKILL while the second checkpoint is evaluated."""
import json
import os
import os.path as osp
import pickle
import signal
import sys
import time

import numpy as np
import pytest

from .test_echofusion_launcher import echofusion_launch, echofusion_tools  # noqa: F401  (fixture)
from .test_echofusion_launcher import pytestmark as launcher_marks
from .test_launches import PROJECT_COLLECTIVE_TIMEOUT_S, kradar_metrics
from tests import launching
from tests.launching import TIMEOUT_SIGNATURES, Nodes, launcher_cmd

pytestmark = launcher_marks  # launch, echofusion; skipped where torch.distributed.launch passes --local-rank
SCORE_THR = ('--cfg-options', 'model.test_cfg.pts.score_thr=0.0')  # keep the low-score boxes of a young model


@pytest.fixture(scope='module')
def project_checkpoints(project_dir, echofusion_tools, tmp_path_factory):  # noqa: F811
    work = tmp_path_factory.mktemp('ef_sweep_train')
    job = echofusion_launch(project_dir, work, 2, '--no-validate', '--cfg-options', 'runner.max_epochs=2',
                            'total_epochs=2')
    assert job.returncode == 0, job.describe()
    assert {'epoch_1.pth', 'epoch_2.pth'} <= set(job.checkpoints()), job.checkpoints()
    return str(work)


def test_environment_sweep_with_echofusions_train_script(project_dir, project_checkpoints, tmp_path):
    pattern = osp.join(project_checkpoints, 'epoch_*.pth')
    sweep = echofusion_launch(project_dir, tmp_path / 'sweep', 2, *SCORE_THR,
                              env={'KRADAR_EVAL_ONLY': '1', 'KRADAR_EVAL_CHECKPOINTS': pattern})
    assert sweep.returncode == 0, sweep.describe()
    assert sweep.output.count('Start running') == 1 and sweep.train_records() == []
    with open(osp.join(sweep.work_dir, 'sweep.json')) as f:
        record = json.load(f)
    assert [(e['stem'], e['status'], e['epoch']) for e in record['checkpoints']] == [('epoch_1', 'ok', 1),
                                                                                     ('epoch_2', 'ok', 2)]
    assert record['eval_key'] == 'pts_bbox/kradar/Sedan_BEV_easy_strict' and record['rule'] == 'greater'
    assert list(record['headline']) == ['Sedan BEV', 'Sedan 3D'] and record['best']['stem'] in ('epoch_1', 'epoch_2')
    val = sweep.val_records()
    assert [r['epoch'] for r in val] == [1, 2] and all(len(kradar_metrics(r)) == 18 for r in val)
    assert osp.isfile(osp.join(sweep.work_dir, 'sweep_ap.png'))
    preds = []
    for stem in ('epoch_1', 'epoch_2'):
        with open(osp.join(sweep.work_dir, 'eval_results', 'results_{}.pkl'.format(stem)), 'rb') as f:
            preds.append(pickle.load(f))
    assert len(preds[0]) == len(preds[1]) == 48
    assert not all(np.array_equal(a['pts_bbox']['scores_3d'], b['pts_bbox']['scores_3d'])
                   for a, b in zip(*preds))                  # each checkpoint's own weights were evaluated
    # the same numbers as a separate eval-only launch of the last checkpoint
    single = echofusion_launch(project_dir, tmp_path / 'single', 2, *(SCORE_THR + (
        'load_from=' + osp.join(project_checkpoints, 'epoch_2.pth'),)), env={'KRADAR_EVAL_ONLY': '1'})
    assert single.returncode == 0, single.describe()
    (alone,) = single.val_records()
    assert kradar_metrics(alone) == kradar_metrics(val[1])


def test_sigkill_on_the_second_node_during_a_sweep_with_echofusions_train_script(
        project_dir, echofusion_tools, project_checkpoints, tmp_path):  # noqa: F811
    work = str(tmp_path / 'nodes')
    port = launching.free_port()
    cmds = [launcher_cmd(1, 'tools/train.py', 'projects/configs/kradar/pointpillars_kradar_radar.py', '--launcher',
                         'pytorch', '--work-dir', work, nnodes=2, node_rank=n, port=port, launcher='launch')
            for n in range(2)]
    env = {'KRADAR_EVAL_ONLY': '1', 'KRADAR_EVAL_CHECKPOINTS': osp.join(project_checkpoints, 'epoch_*.pth')}
    job = Nodes(cmds, work, cwd=project_dir, env=env, pythonpath=[project_dir]).start()
    start = time.time()
    while 'kradar_plugin sweep [2/2]: loading' not in job.printed_so_far(0):
        assert job.running() and time.time() - start < launching.HARD_LIMIT_S, job.finish(1).describe()
        time.sleep(0.1)
    (victim,) = job.workers(1)
    killed = time.time()
    os.kill(victim, signal.SIGKILL)
    job.finish()
    kill_to_exit = max(job.ended) - killed
    sys.stdout.write('\n[lost rank] launch (EchoFusion train.py) torch {}: 2 nodes x 1 worker, SIGKILL of rank 1 '
                     'during the second checkpoint: ended {:.1f} s after the kill\n'.format(
                         __import__('torch').__version__, kill_to_exit))
    assert all(rc != 0 for rc in job.returncodes), job.describe()
    assert kill_to_exit < PROJECT_COLLECTIVE_TIMEOUT_S and not [t for t in TIMEOUT_SIGNATURES if t in job.output], \
        job.describe()
    assert 'rank      : 1 (local_rank: 0)' in job.outputs[1] and 'SIGKILL' in job.outputs[1], job.describe()
    assert 'lost a peer on another node' in job.outputs[0], job.describe()
    with open(osp.join(work, 'sweep.json')) as f:
        assert [(e['stem'], e['status']) for e in json.load(f)['checkpoints']] == [('epoch_1', 'ok')]
    kept = sorted(os.listdir(osp.join(work, 'eval_results')))
    # epoch_1's results saved and its partial record removed once evaluated (the partial folder with it when
    # nothing else is recorded); an interrupted epoch_2 that had written a record keeps it, for a relaunch
    assert kept in (['results_epoch_1.pkl'], ['partial', 'results_epoch_1.pkl']), kept
    if 'partial' in kept:
        assert os.listdir(osp.join(work, 'eval_results', 'partial')) == ['epoch_2']
