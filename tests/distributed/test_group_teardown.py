"""The gloo process group our CPU launches create is destroyed by an ``atexit`` handler, while the interpreter
is whole (a group left to interpreter shutdown can abort a finished rank with exit code -6). Checked through the
real init functions of each adapter that is importable here, in a fresh process whose earlier-registered
``atexit`` handler (run after ours) reports whether a group is still initialised."""
import os
import subprocess
import sys
import textwrap

import pytest

from tests.launching import ROOT, free_port

pytest.importorskip('torch')

SCRIPT = '''
import atexit, os, sys
import torch.distributed as dist
atexit.register(lambda: print('initialised at exit:', dist.is_initialized()))   # runs after ours (LIFO)
os.environ.update(RANK='0', WORLD_SIZE='1', MASTER_ADDR='127.0.0.1', MASTER_PORT=sys.argv[1])
{init}
print('initialised:', dist.is_initialized(), dist.get_backend())
'''

INITS = {
    'mmcv1': ('mmcv.runner', "from kradar_plugin.adapters.mmcv1.dist_init import init_dist_pytorch_cpu\n"
                             "init_dist_pytorch_cpu('nccl', timeout=60)"),
    'mmengine': ('mmengine', "from kradar_plugin.distributed.cpu_group import init_cpu_process_group\n"
                             "init_cpu_process_group({'backend': 'nccl', 'timeout': 60})"),
}


def check_teardown(adapter):
    """Run ``adapter``'s CPU init in a fresh process; assert the group was gloo and is gone at exit."""
    framework, init = INITS[adapter]
    pytest.importorskip(framework)
    env = dict(os.environ, PYTHONPATH=ROOT, KRADAR_PLUGIN_REGISTER='0')
    proc = subprocess.run([sys.executable, '-c', textwrap.dedent(SCRIPT).format(init=init), str(free_port())],
                          env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2:] == ['initialised: True gloo', 'initialised at exit: False']


def test_the_mmcv1_cpu_group_is_destroyed_at_exit():
    check_teardown('mmcv1')     # the mmengine case runs with the 2.0 suite (tests/adapters/mmengine)
