"""The checkpoint sweep through EchoFusion's own launcher and train script (the installed mmdet3d's
unmodified ``tools/train.py`` and ``dist_train.sh``: ``torch.distributed.launch``, 2 gloo processes), asked
for by the environment only (``KRADAR_EVAL_ONLY=1 KRADAR_EVAL_CHECKPOINTS=...``): checkpoints of a real
2-epoch training run of the project's detector, each evaluated by the project's own K-Radar evaluate in
one launch, with the same metrics as a separate eval-only launch of that checkpoint."""
import json
import os.path as osp
import pickle

import numpy as np
import pytest

from .test_echofusion_launcher import echofusion_launch, echofusion_tools  # noqa: F401  (fixture)
from .test_echofusion_launcher import pytestmark as launcher_marks
from .test_launches import kradar_metrics

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
