"""The real command line: ``python -m kradar_plugin.doctor`` (what the kradar-doctor console script runs)."""
import json
import os
import subprocess
import sys

from kradar_plugin.doctor.cli import main
from kradar_plugin.doctor.report import SCHEMA_VERSION

from .helpers import BLOG

STATUSES = {'OK', 'SKIP', 'WARN', 'FAIL'}


def doctor(*args):
    env = dict(os.environ, PYTHONWARNINGS='ignore')
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.doctor'] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def test_json_document_shape():
    """One real ``--json --compile-test`` run (each run imports the whole stack: keep their number low)."""
    rc, out, err = doctor('--json', '--compile-test')
    doc = json.loads(out)
    assert doc['schema'] == SCHEMA_VERSION
    assert set(doc) == {'schema', 'ok', 'counts', 'checks', 'assumed', 'facts'}
    assert doc['assumed'] == []
    names = [c['name'] for c in doc['checks']]
    for name in ('numba-numpy', 'numba-cuda', 'mmcv-full', 'mmcv-range', 'yapf', 'numpy-base', 'shm',
                 'sharing-strategy', 'local-rank', 'dist-timeout'):
        assert name in names
    assert all(set(c) == {'name', 'status', 'reason', 'fix'} and c['status'] in STATUSES for c in doc['checks'])
    assert sum(doc['counts'].values()) == len(doc['checks'])
    assert doc['ok'] == (doc['counts']['FAIL'] == 0) == (rc == 0)
    assert doc['facts']['python'] == '%d.%d.%d' % sys.version_info[:3]
    compile_check = [c for c in doc['checks'] if c['name'] == 'cuda-compile'][0]
    assert compile_check['status'] in STATUSES and compile_check['reason']
    if compile_check['status'] == 'FAIL':   # this stack's numba refused by its toolkit, in the compiler's words
        assert 'Error' in compile_check['reason'] or 'ptxas' in compile_check['reason'], compile_check


def test_blog_environment_on_the_command_line():
    rc, out, err = doctor('--assume', BLOG, '--only', 'FAIL')
    assert rc == 1, err
    lines = out.splitlines()
    fail_lines = [l for l in lines if l.startswith('FAIL ')]
    assert [l.split()[1] for l in fail_lines] == ['numba-numpy', 'numba-cuda', 'yapf']
    assert sum('fix: ' in l for l in lines) == 3
    assert lines[-1].startswith('kradar-doctor: FAIL (3 fail')


def test_blog_environment_json(capsys):
    rc = main(['--assume', BLOG, '--json'])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc['ok'] is False and doc['counts']['FAIL'] >= 3
    assert doc['assumed'] == sorted(['python', 'torch', 'cuda', 'mmcv-full', 'mmdet', 'mmseg', 'mmdet3d', 'numba',
                                     'numpy', 'numpy-base', 'yapf'])
    assert doc['facts']['numba'] == '0.48.0' and doc['facts']['numpy-effective'] == '1.20.3'
    fails = dict((c['name'], c) for c in doc['checks'] if c['status'] == 'FAIL')
    assert "pip install 'yapf==0.40.1'" == fails['yapf']['fix']


def test_bad_assume_exits_2_with_a_clear_message(capsys):
    rc = main(['--assume', 'numbaa=0.48.0'])
    assert rc == 2 and "unknown key 'numbaa'" in capsys.readouterr().err
