"""The example project launched the way EchoFusion users launch it: from the project root, with
EchoFusion's launcher shape -- ``tools/dist_train.sh CONFIG GPUS``, which runs ``python -m
torch.distributed.launch --nproc_per_node=GPUS --master_port=PORT tools/train.py CONFIG --launcher pytorch``
with the project root on ``PYTHONPATH`` -- and EchoFusion's train script, which is the installed mmdet3d's
own ``tools/train.py`` (EchoFusion adds a ``plugin_dir`` import that our config's ``custom_imports`` makes
unnecessary). Both files are copied at test time from the installed mmdet3d package, unmodified.

torch.distributed.launch passes ``--local_rank`` (torch < 2.0) and the script has no ``@record``: an error's
traceback reaches the launcher's summary only through the plugin's error-file hook.
"""
import glob
import json
import os.path as osp
import shutil
import subprocess
import sys

import mmdet3d
import pytest
import torch

from .conftest import CONFIG, VAL_FRAMES
from tests import launching
from tests.launching import assert_ended_by_failfast

from .test_launches import PLANTED, assert_eval_only, derived_config, launch, saved_predictions

MIM_TOOLS = osp.join(osp.dirname(mmdet3d.__file__), '.mim', 'tools')
TORCH_MAJOR = int(torch.__version__.split('.')[0])

pytestmark = [pytest.mark.launch, pytest.mark.echofusion, pytest.mark.skipif(
    TORCH_MAJOR >= 2, reason="torch {}'s torch.distributed.launch passes --local-rank, which mmdet3d {}'s "
                            "tools/train.py does not declare (its users launch with torchrun); EchoFusion's "
                            "launcher shape is torch < 2.0's".format(torch.__version__, mmdet3d.__version__))]


@pytest.fixture(scope='module')
def echofusion_tools(project_dir):
    """``tools/train.py`` and ``tools/dist_train.sh`` in the project root, as EchoFusion's repository has them."""
    tools = osp.join(str(project_dir), 'tools')
    if not osp.isdir(tools):
        shutil.copytree(MIM_TOOLS, tools)
    return tools


def echofusion_launch(project_dir, work_dir, nproc, *flags, config=CONFIG, env=None):
    """``PORT=... bash tools/dist_train.sh CONFIG N --work-dir W FLAGS`` from the project root."""
    extra = dict(env or {})
    extra['PORT'] = str(launching.free_port())
    extra['PATH'] = osp.dirname(sys.executable) + ':' + __import__('os').environ.get('PATH', '')
    cmd = ['bash', 'tools/dist_train.sh', config, str(nproc), '--work-dir', str(work_dir)] + list(flags)
    return launch(cmd, project_dir, work_dir, extra)


@pytest.mark.parametrize('nproc', [2])  # 1 process: test_launches' 1-vs-2 comparison
def test_runner_constructor_and_eval_samples(project_dir, echofusion_tools, tmp_path, nproc):
    job = echofusion_launch(project_dir, tmp_path / 'cfg', nproc,
                            '--cfg-options', 'runner.constructor=EvalOnlyRunnerConstructor',
                            env={'KRADAR_EVAL_SAMPLES': '10'})
    assert_eval_only(job, frames=10)


def test_eval_first_then_trains(project_dir, echofusion_tools, tmp_path):
    job = echofusion_launch(project_dir, tmp_path / 'first', 2, '--cfg-options', 'runner.max_epochs=1',
                            'total_epochs=1', 'log_config.interval=1',
                            env={'KRADAR_EVAL_FIRST': '1', 'KRADAR_EVAL_SAMPLES': '8'})
    assert job.returncode == 0, job.describe()
    assert [r['epoch'] for r in job.val_records()] == [0, 1], job.describe()
    assert len(job.train_records()) > 0 and 'epoch_1.pth' in job.checkpoints(), job.checkpoints()


def test_logged_metrics_equal_kradar_eval_legacy_on_the_saved_predictions(project_dir, echofusion_tools,
                                                                         tmp_path):
    """The environment switch alone (``KRADAR_EVAL_ONLY=1``, EchoFusion's unmodified dist_train.sh and
    train.py); the project's own evaluate (EchoFusion's flow, 0.17.3's box convention here) and ``kradar-eval
    --protocol legacy`` on the predictions the run saved, with the convention the plugin detects."""
    job = echofusion_launch(project_dir, tmp_path / 'eq', 2, '--cfg-options', 'model.test_cfg.pts.score_thr=0.0',
                            env={'KRADAR_EVAL_ONLY': '1'})
    assert 'torch.distributed.launch' in open(osp.join(echofusion_tools, 'dist_train.sh')).read()
    logged = assert_eval_only(job)
    (results,) = glob.glob(osp.join(job.work_dir, 'eval_results', '*.pkl'))
    out = str(tmp_path / 'legacy.json')
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.evaluation', '--infos',
                           osp.join(str(project_dir), 'data', 'kradar', 'kradar_infos_val.pkl'), '--results',
                           results, '--protocol', 'legacy', '--json', out], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, cwd=str(project_dir))
    assert proc.returncode == 0, proc.stdout.decode()
    with open(out) as f:
        offline = json.load(f)['metrics']
    assert sum(len(p['pts_bbox']['scores_3d']) for p in saved_predictions(job)) > VAL_FRAMES
    # EchoFusion's keys pts_bbox/kradar/<class>_<3D|BEV|2D>_<difficulty>_<strict|loose>: '_strict' is AP at the
    # first IoU threshold (0.3), '_loose' the last one written (0.7); kradar-eval's '<class>/<type>@<iou>'
    compared = 0
    for key, value in logged.items():
        cls, kind, _, label = key[len('pts_bbox/kradar/'):].rsplit('_', 3)
        if kind == '2D':
            continue
        short = '{}/{}@{}'.format(cls, kind.lower(), '0.3' if label == 'strict' else '0.7')
        assert abs(offline[short] - value) < 1e-3, (key, value, short, offline[short])
        compared += 1
    assert compared == 12 and offline['Sedan/bev@0.3'] > 0, offline


def test_planted_evaluate_failure_ends_the_job_with_its_traceback(project_dir, echofusion_tools, tmp_path):
    TIMEOUT_S = 120
    with open(osp.join(str(project_dir), 'projects', 'mmdet3d_plugin', 'planted.py'), 'w') as f:
        f.write(PLANTED)
    config = derived_config(project_dir, 'planted_launcher.py', (
        "custom_imports = dict(imports=['projects.mmdet3d_plugin', 'projects.mmdet3d_plugin.planted', "
        "'kradar_plugin'], allow_failed_imports=False)\n"
        "data = dict(val=dict(type='PlantedFailureDataset'))\n"
        "dist_params = dict(backend='gloo', timeout={})\n".format(TIMEOUT_S)))
    job = echofusion_launch(project_dir, tmp_path / 'planted', 2, config=config, env={'KRADAR_EVAL_ONLY': '1'})
    assert_ended_by_failfast(job, TIMEOUT_S)  # not by the process-group timeout
    message = 'RuntimeError: planted failure in the project evaluate, {} results'.format(VAL_FRAMES)
    assert message in job.output and 'planted.py' in job.output, job.describe()
    # the launcher's own summary carries the traceback (not "error_file: <N/A>")
    summary = job.output[job.output.rindex('Root Cause'):] if 'Root Cause' in job.output else job.output
    assert 'error_file: <N/A>' not in summary and message in summary, job.describe()
    assert len(saved_predictions(job)) == VAL_FRAMES


def test_uncaught_error_outside_the_evaluation_reaches_the_launcher_summary(project_dir, echofusion_tools,
                                                                           tmp_path):
    """An error the plugin does not guard (a model type missing from the registry, raised in the script's
    own main) still has its traceback in the summary: the plugin's error-file hook stands in for the
    ``@record`` EchoFusion's script lacks."""
    config = derived_config(project_dir, 'typo_launcher.py', "model = dict(type='MVXFasterRCNNN')\n")
    job = echofusion_launch(project_dir, tmp_path / 'typo', 2, config=config, env={'KRADAR_EVAL_ONLY': '1'})
    assert job.returncode != 0, job.describe()
    summary = job.output[job.output.rindex('Root Cause'):]
    assert 'error_file: <N/A>' not in summary and 'MVXFasterRCNNN' in summary and 'Traceback' in summary, \
        job.describe()


def test_our_train_script_under_torch_distributed_launch(project_dir, tmp_path):
    """Our tools/train.py started by torch < 2.0's ``torch.distributed.launch`` (it passes ``--local_rank``
    to every process) with --eval-only, as a user's own dist_train.sh would start it."""
    from .conftest import ROOT
    cmd = [sys.executable, '-m', 'torch.distributed.launch', '--nproc_per_node=2', '--master_port=' + str(launching.free_port()),
           osp.join(ROOT, 'tools', 'train.py'), CONFIG, '--launcher', 'pytorch', '--work-dir',
           str(tmp_path / 'ours'), '--eval-only']
    job = launch(cmd, project_dir, tmp_path / 'ours', {'PYTHONPATH': str(project_dir) + ':' + ROOT})
    assert_eval_only(job)
