"""The EchoFusion-shaped project (examples/echofusion_project) copied into a temporary directory with demo
data under its data/kradar, so that every test launches from the project's own directory like its users."""
import os.path as osp
import shutil

import pytest

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
PROJECT_SRC = osp.join(ROOT, 'examples', 'echofusion_project')
CONFIG = 'projects/configs/kradar/pointpillars_kradar_radar.py'
VAL_FRAMES = 48


@pytest.fixture(scope='session')
def project_dir(tmp_path_factory):
    """A copy of the project with demo data (VAL_FRAMES validation frames) in data/kradar."""
    dest = tmp_path_factory.mktemp('echofusion') / 'project'
    shutil.copytree(PROJECT_SRC, str(dest), ignore=shutil.ignore_patterns('data', 'work_dirs', '__pycache__'))
    from kradar_plugin.demo.data import generate_demo_dataset
    generate_demo_dataset(str(dest / 'data' / 'kradar'), frames=VAL_FRAMES, train_frames=24, seed=0)
    return dest


@pytest.fixture
def on_project_path(project_dir, monkeypatch):
    """In-process tests: the project importable as ``projects.mmdet3d_plugin`` (from its directory). Its
    modules stay imported for the session (its classes are registered once, as in a real run)."""
    monkeypatch.chdir(str(project_dir))
    monkeypatch.syspath_prepend(str(project_dir))
    return project_dir


@pytest.fixture(scope='session')
def ours_eval_only_two(project_dir, tmp_path_factory):
    """Our tools/dist_train.sh, eval-only, 2 processes, low scores kept: the 1-vs-2 comparison's second run and,
    on the torchrun stacks, the uninterrupted reference of test_inference_records (one launch for both)."""
    from .test_launches import KEEP_LOW_SCORES, ours
    return ours(project_dir, tmp_path_factory.mktemp('ours_eval_only_two'), 2, '--eval-only', *KEEP_LOW_SCORES)
