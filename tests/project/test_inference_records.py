"""When evaluation inference fails (issue 30), launched as users launch the EchoFusion-shaped project: a planted
bad sample (the radar file of one frame truncated, so that its loading raises at index BAD) names index and file
in the fail-fast message and in the record on disk; after the file is fixed a relaunch with another number of
processes infers only what is missing, and the predictions equal an uninterrupted run's bit for bit; a rank
SIGKILLed at about 70% resumes the same way; ``--skip-bad-samples`` scores the dataset without that frame.

torch < 2.0 (EchoFusion's stack): EchoFusion's own ``tools/dist_train.sh`` / ``train.py`` (mmdet3d 0.17.3's) with
``KRADAR_EVAL_ONLY=1``; torch >= 2.0: our ``tools/dist_train.sh --eval-only``.
"""
import glob
import json
import os
import os.path as osp
import pickle
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch

from kradar_plugin.distributed import inference_record as records
from tests import launching
from tests.launching import assert_ended_by_failfast

from .conftest import CONFIG, ROOT, VAL_FRAMES
from .test_launches import KEEP_LOW_SCORES, launch

pytestmark = [pytest.mark.launch]

ECHOFUSION = int(torch.__version__.split('.')[0]) < 2
BAD = 30                                   # rank 0 of 2 meets it in its 4th batch (samples_per_gpu=4)
OPTIONS = list(KEEP_LOW_SCORES)
TIMEOUT_S = 120                            # the project config's dist_params.timeout


def _launch(project_dir, work_dir, nproc, *flags, env=None):
    """EchoFusion's launcher on its stack, ours elsewhere; eval-only either way."""
    extra = dict(env or {})
    if ECHOFUSION:
        from .test_echofusion_launcher import MIM_TOOLS
        tools = osp.join(str(project_dir), 'tools')
        if not osp.isdir(tools):
            shutil.copytree(MIM_TOOLS, tools)
        extra.update(PORT=str(launching.free_port()), KRADAR_EVAL_ONLY='1',
                     PATH=osp.dirname(sys.executable) + ':' + os.environ.get('PATH', ''))
        cmd = ['bash', 'tools/dist_train.sh', CONFIG, str(nproc), '--work-dir', str(work_dir)] + list(flags)
    else:
        cmd = ['bash', osp.join(ROOT, 'tools', 'dist_train.sh'), CONFIG, str(nproc), '--work-dir', str(work_dir),
               '--eval-only'] + list(flags)
    return launch(cmd, project_dir, work_dir, extra)


def predictions(job):
    with open(osp.join(job.work_dir, 'eval_results', 'results_epoch_0.pkl'), 'rb') as f:
        return pickle.load(f)


def assert_identical(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for key in ('boxes_3d', 'scores_3d', 'labels_3d'):
            assert np.array_equal(x['pts_bbox'][key], y['pts_bbox'][key]), key


def partial(job):
    return osp.join(job.work_dir, 'eval_results', 'partial', 'epoch_0')


def bad_file(project_dir):
    with open(osp.join(str(project_dir), 'data', 'kradar', 'kradar_infos_val.pkl'), 'rb') as f:
        info = pickle.load(f)[BAD]
    seq = info['annos']['label_file'].split(',')[0]
    return osp.join(str(project_dir), 'data', 'kradar', seq, info['radar']['bev_path'])


class Truncated(object):
    """The radar file of frame BAD cut to 90 bytes while the block runs (restored after)."""

    def __init__(self, project_dir):
        self.path = bad_file(project_dir)

    def __enter__(self):
        with open(self.path, 'rb') as f:
            self.data = f.read()
        with open(self.path, 'wb') as f:
            f.write(self.data[:90])
        return self

    def fix(self):
        with open(self.path, 'wb') as f:
            f.write(self.data)

    def __exit__(self, *exc):
        self.fix()


@pytest.fixture(scope='module')
def reference(project_dir, tmp_path_factory, request):
    """An uninterrupted 2-process run's predictions: on the torchrun stacks the launch test_launches' 1-vs-2
    comparison makes too (the same command), on EchoFusion's stack one through EchoFusion's launcher."""
    if ECHOFUSION:
        job = _launch(project_dir, tmp_path_factory.mktemp('reference') / 'wd', 2, *OPTIONS)
    else:
        job = request.getfixturevalue('ours_eval_only_two')
    assert job.returncode == 0, job.describe()
    return predictions(job)


def test_bad_sample_named_then_relaunch_infers_only_the_rest(project_dir, reference, tmp_path):
    work_dir = tmp_path / 'wd'
    with Truncated(project_dir) as planted:
        # DataLoader worker processes: the index survives their re-raise in the main process
        job = _launch(project_dir, work_dir, 2, *(OPTIONS + ['data.workers_per_gpu=2']))
        assert_ended_by_failfast(job, TIMEOUT_S)
        named = 'kradar_plugin: dataset index {} (label_file '.format(BAD)
        summary = job.output[job.output.rindex('Root Cause'):]
        for text in (job.output, summary):            # the rank's message and the launcher's summary
            assert named in text and planted.path[len(str(project_dir)) + 1:] in text, job.describe()
        assert 'EOF: reading array header' in summary
        state = records.read_records(partial(job), next(iter(_fingerprints(partial(job)))))
        assert state.failures[BAD]['type'] == 'ValueError' and len(state.files) == 2
        assert dict(map(tuple, state.failures[BAD]['identity']))['sequence'] == planted.path.split(os.sep)[-3]
        recorded = len(state.done)
        assert 0 < recorded < VAL_FRAMES
        planted.fix()
        again = _launch(project_dir, work_dir, 3, *OPTIONS)
    assert again.returncode == 0, again.describe()
    assert 'kradar_plugin: resuming from the partial record' in again.output
    assert_identical(predictions(again), reference)
    assert not osp.isdir(partial(again))              # removed once the evaluation succeeded


def _fingerprints(directory, running=False):
    """The records' one fingerprint; while the job runs (``running``), a rank's file may not hold its first
    chunk yet: such files are passed over, and [] is returned while none does."""
    out = []
    for path in glob.glob(osp.join(directory, '*' + records.SUFFIX)):
        with open(path, 'rb') as f:
            bodies, _ = records._chunks(f.read())
        if bodies or not running:
            out.append(records._load(bodies[0])['fingerprint'])
    assert (out or running) and all(fp == out[0] for fp in out)
    return out[:1]


SLOW = """
import time
from mmdet.datasets import PIPELINES


@PIPELINES.register_module()
class SlowDown(object):
    def __call__(self, results):
        time.sleep(0.15)
        return results
"""


@pytest.mark.skipif(ECHOFUSION, reason='one kill test, on the torchrun stack')
def test_rank_killed_at_70_percent_resumes_with_another_world_size(project_dir, reference, tmp_path):
    with open(osp.join(str(project_dir), 'projects', 'mmdet3d_plugin', 'slow.py'), 'w') as f:
        f.write(SLOW)
    with open(osp.join(str(project_dir), CONFIG)) as f:   # the project's config, each test sample slowed down
        text = f.read().replace("'projects.mmdet3d_plugin', 'kradar_plugin'",
                                "'projects.mmdet3d_plugin', 'projects.mmdet3d_plugin.slow', 'kradar_plugin'")
    config = osp.join(osp.dirname(CONFIG), 'slow.py')
    with open(osp.join(str(project_dir), config), 'w') as f:
        f.write(text.replace('test_pipeline = [\n', "test_pipeline = [\n    dict(type='SlowDown'),\n", 1))
    work_dir = tmp_path / 'wd'
    cmd = launching.torchrun_cmd(2, osp.join(ROOT, 'tools', 'train.py'), config, '--launcher', 'pytorch',
                                 '--work-dir', work_dir, '--eval-only', *(OPTIONS + ['runner.eval_record_every=2']))
    nodes = launching.Nodes([cmd], work_dir, cwd=project_dir, env={'PYTHONPATH': str(project_dir)}).start()
    directory = osp.join(str(work_dir), 'eval_results', 'partial', 'epoch_0')
    done = 0
    while nodes.running() and done < 0.7 * VAL_FRAMES:
        time.sleep(0.05)
        fingerprints = _fingerprints(directory, running=True) if osp.isdir(directory) else []
        if fingerprints:
            done = len(records.read_records(directory, fingerprints[0]).done)
    workers = nodes.workers(0)
    assert done < VAL_FRAMES and len(workers) == 2, nodes.finish().describe()
    os.kill(workers[1], signal.SIGKILL)
    nodes.finish()
    assert nodes.returncodes[0] != 0, nodes.describe()
    cmd = launching.torchrun_cmd(1, osp.join(ROOT, 'tools', 'train.py'), config, '--launcher', 'pytorch',
                                 '--work-dir', work_dir, '--eval-only', *OPTIONS)
    again = launching.run(cmd, work_dir, cwd=project_dir, env={'PYTHONPATH': str(project_dir), 'OMP_NUM_THREADS': '1'},
                          job_class=__import__('tests.adapters.mmcv1.launch_utils', fromlist=['Job']).Job)
    assert again.returncode == 0, again.describe()
    assert 'kradar_plugin: resuming from the partial record' in again.output, again.describe()
    assert_identical(predictions(again), reference)


@pytest.mark.skipif(ECHOFUSION, reason='our tools/train.py flag; KRADAR_EVAL_SKIP_BAD is the same path')
def test_skip_bad_samples_scores_the_dataset_without_that_frame(project_dir, reference, tmp_path):
    with Truncated(project_dir):
        job = _launch(project_dir, tmp_path / 'wd', 2, '--skip-bad-samples', *OPTIONS)
    assert job.returncode == 0, job.describe()
    assert '1 samples excluded: dataset index {} (label_file'.format(BAD) in job.output
    # the logged metrics say so too (the project's own evaluate: beside its keys), the list lies beside the results
    listed = osp.join(job.work_dir, 'eval_results', 'results_epoch_0.excluded.json')
    assert [f['index'] for f in json.load(open(listed))] == [BAD]
    kept = predictions(job)
    assert_identical(kept, reference[:BAD] + reference[BAD + 1:])   # never an empty prediction in its place
    # the logged metrics are kradar-eval's (legacy protocol) on the infos without that frame
    from kradar_plugin.files.portable_pickle import dump
    with open(osp.join(str(project_dir), 'data', 'kradar', 'kradar_infos_val.pkl'), 'rb') as f:
        infos = pickle.load(f)
    without = str(tmp_path / 'infos_without.pkl')
    with open(without, 'wb') as f:
        dump(infos[:BAD] + infos[BAD + 1:], f)
    out = str(tmp_path / 'legacy.json')
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.evaluation', '--infos', without, '--results',
                           osp.join(job.work_dir, 'eval_results', 'results_epoch_0.pkl'), '--protocol', 'legacy',
                           '--json', out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(project_dir))
    assert proc.returncode == 0, proc.stdout.decode()
    with open(out) as f:
        offline = json.load(f)['metrics']
    # the full infos with the runner's list of excluded samples score the same
    listing = subprocess.run([sys.executable, '-m', 'kradar_plugin.evaluation', '--infos', osp.join(
        str(project_dir), 'data', 'kradar', 'kradar_infos_val.pkl'), '--results', osp.join(
        job.work_dir, 'eval_results', 'results_epoch_0.pkl'), '--protocol', 'legacy', '--excluded-samples', listed,
        '--json', out + '.2'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(project_dir))
    assert listing.returncode == 0, listing.stdout.decode()
    with open(out + '.2') as f:
        again = json.load(f)
    assert again['metrics'] == offline and again['samples_excluded'] == 1
    logged = job.val_records()[0]
    assert logged['samples_excluded'] == 1
    compared = 0
    for key, value in logged.items():
        if not key.startswith('pts_bbox/kradar/Sedan_') or '_2D_' in key:
            continue
        cls, kind, _, label = key[len('pts_bbox/kradar/'):].rsplit('_', 3)
        short = '{}/{}@{}'.format(cls, kind.lower(), '0.3' if label == 'strict' else '0.7')
        assert abs(offline[short] - value) < 1e-3, (key, value, short, offline[short])
        compared += 1
    assert compared == 12
