"""The gloo process group our CPU launches create is destroyed by an ``atexit`` handler, while the interpreter
is whole (a group left to interpreter shutdown can abort a finished rank with exit code -6), also when a
``DistributedDataParallel`` wrapper that holds it outlives the run (as the runner's does on mmdet3d 1.4, where
trimesh keeps an import traceback with the runner's frames): its worker threads are gone before the interpreter
finalizes. Checked through the real init functions of each adapter that is importable here, in a fresh process
whose earlier-registered ``atexit`` handler (run after ours) reports whether a group is still initialised and how
many threads it still has besides Python's own."""
import os
import os.path as osp
import re
import subprocess
import sys
import textwrap

import pytest

from tests.launching import ROOT, free_port

pytest.importorskip('torch')

SCRIPT = '''
import atexit, os, sys, threading
import torch
import torch.distributed as dist
threads = lambda: len(os.listdir('/proc/self/task')) - threading.active_count()     # not Python's own
atexit.register(lambda: print('at exit: initialised', dist.is_initialized(), 'threads', threads()))  # after ours
os.environ.update(RANK='0', WORLD_SIZE='1', MASTER_ADDR='127.0.0.1', MASTER_PORT=sys.argv[1])
{imports}
before = threads()
{init}
gloo = threads() - before
print('initialised:', dist.is_initialized(), dist.get_backend())
KEPT = []                                        # a wrapper kept to the end, as trimesh keeps the runner's
if sys.argv[2] != 'nothing':                     # a trained step (torch >= 2.4 imports torch._dynamo there)
    wrapper = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    wrapper(torch.ones(1, 2)).sum().backward()
    if sys.argv[2] == 'wrapper':
        KEPT.append(wrapper)
    del wrapper
print('threads without the group:', threads() - gloo, 'gloo threads:', gloo)
'''

INITS = {
    'mmcv1': ('mmcv.runner', "from kradar_plugin.adapters.mmcv1.dist_init import init_dist_pytorch_cpu, "
              "install_distributed_cpu_patches\ninstall_distributed_cpu_patches()    # its imports start threads",
              "init_dist_pytorch_cpu('nccl', timeout=60)"),
    'mmengine': ('mmengine', "from kradar_plugin.distributed.cpu_group import init_cpu_process_group",
                 "init_cpu_process_group({'backend': 'nccl', 'timeout': 60})"),
}


def check_teardown(adapter, kept='nothing'):
    """Run ``adapter``'s CPU init in a fresh process, then nothing, a DDP step whose wrapper is dropped
    ('step': what a step imported may hold the group) or one whose wrapper is kept to the end ('wrapper');
    assert the group was gloo and is gone at exit with its threads."""
    if not osp.isdir('/proc/self/task'):
        pytest.skip('threads are counted in /proc (Linux)')
    framework, imports, init = INITS[adapter]
    pytest.importorskip(framework)
    env = dict(os.environ, PYTHONPATH=ROOT, KRADAR_PLUGIN_REGISTER='0')
    script = textwrap.dedent(SCRIPT).format(imports=imports, init=init)
    proc = subprocess.run([sys.executable, '-c', script, str(free_port()), kept], env=env, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()[-3:]
    assert lines[0] == 'initialised: True gloo', proc.stdout
    without, gloo = [int(w) for w in re.match(r'threads without the group: (\d+) gloo threads: (\d+)$',
                                               lines[1]).groups()]
    assert gloo > 0, proc.stdout                 # what the teardown must end
    assert re.match(r'at exit: initialised False threads (\d+)$', lines[2]), proc.stdout
    assert int(lines[2].split()[-1]) <= without, proc.stdout


def kept_cases():
    """'nothing', 'step' and 'wrapper'; the last where the teardown releases the holders (torch >= 2; torch
    1.10's documented exception: ``group_teardown``)."""
    from kradar_plugin.distributed.group_teardown import releases_wrappers
    return ['nothing', 'step', pytest.param('wrapper', marks=pytest.mark.skipif(
        not releases_wrappers(), reason='torch < 2: the wrapper keeps the group (its store can hang at exit)'))]


@pytest.mark.parametrize('kept', kept_cases())
def test_the_mmcv1_cpu_group_is_destroyed_at_exit(kept):
    check_teardown('mmcv1', kept)     # the mmengine case runs with the 2.0 suite (tests/adapters/mmengine)
