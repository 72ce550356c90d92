"""The numba x CUDA facts against NVIDIA's real compilers, without a GPU.

The toolkits come from the package registry (tools/cuda_toolchain.py: the nvidia-cuda-nvcc and -runtime wheels of
CUDA 11.8 and 12.9, cached) and the machine's CUDA 13.0 where it is installed; each compile runs in the doctor's
child (``probes/compile_test.py``) with this stack's numba, and with numba 0.56.4 from a cached venv. What a
compile must print is derived from ``kradar_plugin.facts`` (the numba x toolkit rows, the PTX ISA table, the
known compile failures), so a wrong fact fails here. Skips, with the reason, where the registry is unreachable.
"""
import functools
import json
import os
import stat
import subprocess
import sys

import pytest

from kradar_plugin.doctor.probes.compile_test import run_compile_test
from kradar_plugin.facts import CUDA_MIN_DRIVER, numba_toolkit_findings
from kradar_plugin.facts.cuda_compile import compile_failure, max_ptx_isa
from kradar_plugin.facts.versions import parse_version

numba = pytest.importorskip('numba')

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MACHINE_CUDA = '/usr/local/cuda-13.0'
OURS = 'kradar_plugin intersections'
ARCHS = ['sm_75', 'sm_90']   # the oldest CUDA 13 still compiles for, and the newest CUDA 11.8 knows


@functools.lru_cache(maxsize=None)
def toolchain(*args):
    """tools/cuda_toolchain.py's answer (a folder or a python), or the reason it has none."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, 'tools', 'cuda_toolchain.py')] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=1800)
    if proc.returncode == 3:
        return None, proc.stderr.strip()
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip(), None


def need(*args):
    found, reason = toolchain(*args)
    if found is None:
        pytest.skip(reason)
    return found


def toolkit_env(home, runtime=True):
    """CUDA_HOME at ``home``, its libNVVM first for the loader (numba's search skips the wheel's unversioned
    libnvvm.so and leaves it to the loader), kradar_plugin importable by another python."""
    env = dict(os.environ, CUDA_HOME=home, PYTHONPATH=ROOT, LD_LIBRARY_PATH=os.path.join(home, 'nvvm', 'lib64'))
    env.pop('NUMBA_ENABLE_CUDASIM', None)
    return env


def toolkits():
    """(CUDA version, CUDA_HOME) of every toolkit reachable here: the registry's, then the machine's."""
    out = [(v, need('toolkit', v)) for v in ('11.8', '12.9')]
    if os.path.isdir(os.path.join(MACHINE_CUDA, 'nvvm')):
        out.append(('13.0', MACHINE_CUDA))
    return out


def rows_of(report, kernel=OURS):
    rows = [r for r in report['rows'] if r['kernel'].startswith(kernel)]
    assert rows, report
    return rows


def expect_from_facts(numba_version, cuda, report):
    """The rows of the plugin kernel must show what the facts say of (numba, cuda): the refusal the numba x
    toolkit row names, or PTX of that toolkit's ISA assembled by its ptxas."""
    rows = rows_of(report)
    fails = [f for f in numba_toolkit_findings(numba_version, cuda) if f.status == 'FAIL']
    runtime_error = report['toolkit'].get('runtime-error')
    if fails:
        want = 'nvvm-ir-syntax' if 'parse expected comma' in fails[0].reason else 'nvvm-ir-version'
        for row in rows:
            assert row['status'] == 'fail' and row['stage'] == 'ptx', row
            assert compile_failure(row['error']).name == want, (row['error'], fails[0].reason)
    elif runtime_error and parse_version(numba_version) >= '0.50':
        for row in rows:   # numba (not 0.48's path) asks the CUDA runtime which GPUs it may compile for
            assert compile_failure(row['error']).name == 'no-runtime-ccs', (row, runtime_error)
    else:
        for row in rows:
            assert row['status'] == 'ok' and row['stage'] == 'sass', row
            assert row['ptx-version'] == max_ptx_isa(cuda), (row, cuda)
            assert row['ptx-target'] == row['arch']


@pytest.mark.parametrize('version', ['11.8', '12.9', '13.0', '11.8 nvcc'])
def test_this_numba_against_each_toolkit(version, tmp_path):
    """'11.8 nvcc': the nvcc wheel alone, its libNVVM and ptxas, with whatever CUDA runtime the loader finds (CUDA
    11.8's own answers numba only with a driver)."""
    found = dict(toolkits())
    if version.endswith(' nvcc'):
        version = version.split()[0]
        found[version] = need('nvcc', version)
    if version not in found:
        pytest.skip('no CUDA %s here' % version)
    home = found[version]
    env = toolkit_env(home) if home != MACHINE_CUDA else dict(os.environ, PYTHONPATH=ROOT)
    report = run_compile_test(ARCHS, env=env)
    toolkit = report['toolkit']
    if report.get('error'):   # CUDA 13 keeps libNVVM in lib/, numba <= 0.56 look in nvvm/lib64 only
        assert compile_failure(report['error']).name == 'libnvvm-missing', report['error']
        assert not os.path.isdir(os.path.join(home, 'nvvm', 'lib64')) and parse_version(numba.__version__) < '0.57'
        return
    assert toolkit['version'] == version and toolkit['root'] == home, toolkit   # the toolkit is named
    assert os.path.realpath(toolkit['libnvvm']).startswith(os.path.realpath(os.path.join(home, 'nvvm')) if
                                                           version != '13.0' else MACHINE_CUDA), toolkit
    expect_from_facts(numba.__version__, version, report)


def test_numba_056_refusals():
    """numba 0.56.4 (a cached venv): CUDA 12.9 with its runtime -> the IR 1.6 vs 2.0 refusal of the facts' row;
    the nvcc wheel alone (no libcudart) and CUDA 11.8 without a driver -> no GPU it may compile for."""
    python = need('numba', '0.56.4')
    home = need('toolkit', '12.9')
    report = run_compile_test(['sm_80'], python=python, env=toolkit_env(home))
    assert report['numba'] == '0.56.4' and report['toolkit']['runtime-version'] == '12.9'
    expect_from_facts('0.56.4', '12.9', report)
    assert 'IR version 1.6 incompatible with current version 2.0' in rows_of(report)[0]['error']
    nvcc_only = need('nvcc', '12.9')
    report = run_compile_test(['sm_80'], python=python, env=toolkit_env(nvcc_only))
    assert report['toolkit']['runtime-version'] is None
    assert compile_failure(rows_of(report)[0]['error']).name == 'no-runtime-ccs'
    report = run_compile_test(['sm_80'], python=python, env=toolkit_env(need('toolkit', '11.8')))
    expect_from_facts('0.56.4', '11.8', report)


def test_each_ptxas_reads_up_to_its_own_ptx_isa(tmp_path):
    """PTX of the newest toolkit this numba compiles with, fed to the older toolkits' ptxas: each refuses it
    naming its own ISA, which is the PTX ISA table's row for that CUDA."""
    found = toolkits()
    for index in range(len(found) - 1, 0, -1):
        version, home = found[index]
        env = toolkit_env(home) if home != MACHINE_CUDA else dict(os.environ, PYTHONPATH=ROOT)
        report = run_compile_test(['sm_80'], env=env, ptx_dir=str(tmp_path))
        ptx = [r['ptx-file'] for r in report['rows'] if r.get('ptx-file') and r['kernel'] == OURS]
        if ptx:
            break
    else:
        pytest.skip('numba %s compiles no PTX with CUDA %s' % (numba.__version__, ', '.join(v for v, _ in found[1:])))
    from kradar_plugin.doctor.probes.cuda_compile_child import assemble
    with open(ptx[0]) as f:
        text = f.read()
    for older, older_home in found[:index]:
        if parse_version(max_ptx_isa(older)) >= parse_version(max_ptx_isa(version)):
            continue
        ok, detail = assemble(os.path.join(older_home, 'bin', 'ptxas'), text, 'sm_80', 120)
        assert not ok and "current version is '%s'" % max_ptx_isa(older) in detail, (older, detail)


def doctor(env, *args):
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.doctor', '--json'] + list(args), env=env, cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=900)
    return proc.returncode, proc.stdout, proc.stderr


def test_doctor_names_the_toolkit_and_the_failure_with_its_fix():
    """kradar-doctor --compile-test --gpu-arch sm_80 --json with CUDA 11.8: the compile rows name numba, CUDA 11.8
    and its folder; a refused compile carries the numba x toolkit row's fix; numba-cuda/libnvvm are judged."""
    home = need('toolkit', '11.8')
    rc, out, err = doctor(toolkit_env(home), '--compile-test', '--gpu-arch', 'sm_80')
    doc = json.loads(out)
    checks = [c for c in doc['checks'] if c['name'] == 'cuda-compile']
    assert checks and all('CUDA 11.8 at %s' % home in c['reason'] for c in checks), checks
    assert doc['facts']['gpu-arch'] == ['sm_80'] and doc['facts']['cuda'] == '11.8'
    for name in ('numba-cuda', 'libnvvm'):
        assert [c['status'] for c in doc['checks'] if c['name'] == name] != ['SKIP'], name
    fails = [f for f in numba_toolkit_findings(numba.__version__, '11.8') if f.status == 'FAIL']
    ours = [c for c in checks if c['reason'].startswith(OURS)]
    if fails:   # EchoFusion's numba 0.48: the blog's NvvmError, and the fact's fix
        assert rc == 1 and all(c['status'] == 'FAIL' for c in ours)
        assert all('parse expected comma after' in c['reason'] and fails[0].fix in c['fix'] for c in ours)
        mmdet3d = [c for c in checks if c['reason'].startswith('mmdet3d')]
        if mmdet3d:   # its kernel meets the IR parser on a load first: the blog's exact words
            assert "parse expected comma after load's type" in mmdet3d[0]['reason'], mmdet3d
            assert 'import kradar_plugin' in mmdet3d[0]['fix']
    elif doc['facts']['compile-test']['toolkit'].get('runtime-error'):   # CUDA 11.8's runtime needs a driver
        assert [c['status'] for c in ours] == ['WARN'] and 'GPU node' in ours[0]['fix'], ours
    elif parse_version(numba.__version__) >= '0.57':
        assert [c['status'] for c in ours] == ['OK'] and 'PTX ISA %s -> SASS' % max_ptx_isa('11.8') in ours[0]['reason']


def test_driver_older_than_the_ptx_is_named_with_the_driver_it_needs():
    if not os.path.isdir(os.path.join(MACHINE_CUDA, 'nvvm')) or parse_version(numba.__version__) < '0.57':
        pytest.skip('needs the machine CUDA 13.0 and a numba that compiles for it')
    rc, out, err = doctor(dict(os.environ, PYTHONPATH=ROOT), '--compile-test', '--gpu-arch', 'sm_90',
                          '--assume', 'driver=535.104.05')
    doc = json.loads(out)
    driver_rows = [c for c in doc['checks'] if c['name'] == 'cuda-compile' and 'driver' in c['reason']]
    need_driver = dict(CUDA_MIN_DRIVER)['13.0']
    assert rc == 1 and driver_rows and driver_rows[0]['status'] == 'FAIL', doc['checks']
    assert 'PTX ISA %s' % max_ptx_isa('13.0') in driver_rows[0]['reason']
    assert 'driver >= %s' % need_driver in driver_rows[0]['reason'] and '535.104.05' in driver_rows[0]['reason']


def test_mmdet3d_kernels_are_found_where_that_version_keeps_them():
    """The installed mmdet3d's, or 1.4.0's files on PYTHONPATH (found, never imported): its eager kernel is
    compiled as declared; whatever the compile says is a known failure or SASS."""
    env = toolkit_env(need('toolkit', '12.9'))   # a libNVVM every numba here loads, and a runtime without a driver
    try:
        import importlib.util
        installed = importlib.util.find_spec('mmdet3d') is not None
    except ImportError:
        installed = False
    if not installed:
        env['PYTHONPATH'] = os.pathsep.join([ROOT, need('mmdet3d', '1.4.0')])
    report = run_compile_test(['sm_80'], env=env)
    rows = rows_of(report, 'mmdet3d')
    assert any(r['kernel'].endswith('kitti_utils/rotate_iou.py:rotate_iou_kernel_eval') for r in rows), rows
    for row in rows:
        assert row['status'] == 'ok' or compile_failure(row['error']) is not None, row


# ---- bad input: one clear line each, no hang

def test_cuda_home_that_is_a_file_or_not_a_toolkit(tmp_path):
    (tmp_path / 'file').write_text('x')
    report = run_compile_test(ARCHS, env=dict(os.environ, CUDA_HOME=str(tmp_path / 'file')))
    assert report['status'] == 'fail' and report['detail'] == 'CUDA_HOME=%s is a file, not a CUDA toolkit folder' \
        % (tmp_path / 'file')
    report = run_compile_test(ARCHS, env=dict(os.environ, CUDA_HOME=str(tmp_path)))
    assert report['detail'].startswith('CUDA_HOME=%s has no nvvm/ folder' % tmp_path)


def fake_toolkit(tmp_path, real_home, libnvvm=None, ptxas=None):
    """A CUDA_HOME whose nvvm/ is ``real_home``'s unless ``libnvvm`` (bytes) replaces the library, and whose
    bin/ptxas is ``ptxas`` (a shell script) or absent."""
    home = tmp_path / 'cuda'
    (home / 'bin').mkdir(parents=True)
    if libnvvm is None:
        os.symlink(os.path.join(real_home, 'nvvm'), str(home / 'nvvm'))
    else:
        (home / 'nvvm' / 'lib64').mkdir(parents=True)
        os.symlink(os.path.join(real_home, 'nvvm', 'libdevice'), str(home / 'nvvm' / 'libdevice'))
        # a versioned name: numba's own search finds it and opens it by path (the loader would skip it)
        (home / 'nvvm' / 'lib64' / 'libnvvm.so.4.0.0').write_bytes(libnvvm)
    if ptxas is not None:
        (home / 'bin' / 'ptxas').write_text(ptxas)
        (home / 'bin' / 'ptxas').chmod(stat.S_IRWXU)
    return str(home)


def another_architecture():
    """A real x86-64 shared library (libm) marked as built for AArch64 (ELF e_machine 0xB7)."""
    import ctypes.util
    import glob
    found = sorted(glob.glob('/lib/x86_64-linux-gnu/libm.so.*') + glob.glob('/usr/lib64/libm.so.*'))
    if not found:
        pytest.skip('no libm to build a foreign-architecture library from (%s)' % ctypes.util.find_library('m'))
    with open(found[0], 'rb') as f:
        data = bytearray(f.read())
    data[18:20] = b'\xb7\x00'
    return bytes(data)


@pytest.mark.parametrize('kind', ['garbage', 'aarch64'])
def test_libnvvm_that_does_not_load(tmp_path, kind):
    real = need('toolkit', '12.9')
    library = b'\x7fELF garbage, not a shared library\n' * 10 if kind == 'garbage' else another_architecture()
    home = fake_toolkit(tmp_path, real, libnvvm=library)
    report = run_compile_test(ARCHS, env=toolkit_env(home), timeout=300)
    assert report['status'] == 'fail' and report['rows'] == [], report
    assert len(report['detail'].splitlines()) == 1 and 'libnvvm.so' in report['detail'], report['detail']
    if kind == 'aarch64' and 'No such file' in report['detail']:   # glibc's words for a foreign library
        assert report['detail'].endswith('(the file exists: not a library this machine can load)')


def test_ptxas_that_hangs_is_bounded_and_a_missing_one_leaves_the_ptx_stage(tmp_path):
    real = need('toolkit', '12.9')
    home = fake_toolkit(tmp_path / 'hang', real, ptxas='#!/bin/sh\nexec sleep 600\n')
    report = run_compile_test(['sm_80'], env=toolkit_env(home), ptxas_timeout=3, timeout=300)
    row = rows_of(report)[0]
    if parse_version(report['numba']) >= '0.57':
        assert row['status'] == 'fail' and row['error'] == 'ptxas did not finish within 3 s (%s)' % os.path.join(
            home, 'bin', 'ptxas'), row
    home = fake_toolkit(tmp_path / 'none', real)
    report = run_compile_test(['sm_80'], env=toolkit_env(home), timeout=300)
    assert report['toolkit']['ptxas'] is None
    row = rows_of(report)[0]
    if parse_version(report['numba']) >= '0.57':
        assert row['status'] == 'ok' and row['stage'] == 'ptx' and 'no ptxas' in row['detail'], row


def test_unknown_gpu_arch_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, '-m', 'kradar_plugin.doctor', '--compile-test', '--gpu-arch', 'sm_80,sm_81'],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)
    assert proc.returncode == 2 and proc.stdout == ''
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and "unknown architecture 'sm_81'" in proc.stderr


def test_every_numba_row_says_where_its_cuda_facts_come_from():
    """Each numba x CUDA row is either compiled by this suite (the numba it names is one the suite runs: this
    stack's, or a cached venv of tools/cuda_toolchain.py) or says it is read, and from where."""
    import re
    from kradar_plugin.facts.numba import CUDA_EVIDENCE, NUMBA_SERIES, numba_series
    sys.path.insert(0, os.path.join(ROOT, 'tools'))
    try:
        from cuda_toolchain import NUMBA_ENVS
    finally:
        sys.path.pop(0)
    assert [row.first for row in NUMBA_SERIES] == list(CUDA_EVIDENCE)
    stacks = set(NUMBA_ENVS) | {'0.60.0', '0.68.1'}   # the cached venvs; the 1.x and numpy-2 stacks
    for first, evidence in CUDA_EVIDENCE.items():
        compiled = re.match(r'compiled \(numba ([\d.]+)[,)]', evidence)
        assert compiled or evidence.startswith('read: '), (first, evidence)
        if compiled:
            assert compiled.group(1) in stacks and numba_series(compiled.group(1)).first == first, evidence
    assert CUDA_EVIDENCE[numba_series(numba.__version__).first].startswith('compiled') == (
        numba.__version__ in stacks)


def test_wheel_libnvvm_skipped_by_numbas_search_is_named():
    """CUDA_HOME at the nvcc wheel alone, nothing on LD_LIBRARY_PATH: numba's search skips the wheel's unversioned
    libnvvm.so; the report says which libNVVM the compiles really used and how to make it the wheel's."""
    from kradar_plugin.doctor.rules import compile_test
    home = need('nvcc', '12.9')
    env = dict(os.environ, CUDA_HOME=home, PYTHONPATH=ROOT)
    env.pop('LD_LIBRARY_PATH', None)
    report = run_compile_test(['sm_80'], env=env)
    toolkit = report['toolkit']
    if report.get('error'):   # no other libNVVM known to the loader: numba's own refusal
        assert compile_failure(report['error']).name == 'libnvvm-missing', report['error']
        return
    assert toolkit['cuda-home-libnvvm'] == [os.path.join(home, 'nvvm', 'lib64', 'libnvvm.so')]
    assert toolkit['cuda-home-libnvvm-used'] is False and not toolkit['libnvvm'].startswith(home)
    found = compile_test({'compile-test': report})
    assert found[0].status == 'WARN' and toolkit['libnvvm'] in found[0].reason
    assert found[0].fix == 'export LD_LIBRARY_PATH=%s/nvvm/lib64:$LD_LIBRARY_PATH' % home
