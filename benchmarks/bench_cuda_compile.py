"""Cold compile time of mmdet3d's rotate-IoU kernel against kradar_plugin's, per numba: what the first
evaluation of a new process waits for before the GPU computes anything.

Each repetition compiles each kernel in a fresh process of its own (the doctor's compile child,
``kradar-doctor --compile-test``): numba lowers the kernel, libNVVM makes PTX (timed: "PTX s"), the toolkit's
ptxas makes SASS (timed apart: "SASS s"; on a GPU the driver does this step). Prints the median of each, and
mmdet3d's time over ours. mmdet3d's kernel is the one of the installed mmdet3d (or ``--mmdet3d DIR``: a folder
holding an mmdet3d package, never imported).

Whether numba's cache keeps a kernel across processes: numba caches CUDA kernels only when declared with
``cuda.jit(cache=True)``, and only with a driver (numba 0.68's cache key, ``codegen.magic_tuple``, asks the
current context for its device: tried here, it raises CudaSupportError), so without a GPU nothing is cached;
the script prints whether this numba's ``cuda.jit`` takes ``cache`` and whether each kernel declares it.

Usage: python benchmarks/bench_cuda_compile.py [--python PY ...] [--cuda-home DIR] [--arch sm_80] [--repeat 3]
       [--mmdet3d DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kradar_plugin.doctor.probes.compile_test import run_compile_test  # noqa: E402

CACHE_PROBE = r'''
import inspect, json, re, sys
from numba import cuda
try:
    takes = 'cache' in inspect.signature(cuda.jit).parameters
except (TypeError, ValueError):
    takes = False
declared = {}
for label, path in [a.split('=', 1) for a in sys.argv[1:]]:
    text = open(path).read()
    declared[label] = bool(re.search(r'cuda\.jit\([^)]*cache\s*=\s*True', text))
print(json.dumps({'numba': __import__('numba').__version__, 'takes-cache': takes, 'declared': declared}))
'''


def median(values):
    return statistics.median(values) if values else float('nan')


def bench(python, env, arch, repeat):
    per_kernel = {}
    report = None
    for _ in range(repeat):
        rows = []
        for only in ('mmdet3d', 'kradar_plugin'):   # each kernel in its own cold process
            report = run_compile_test([arch], python=python, env=env, only=only)
            rows += report['rows']
        for row in rows:
            times = per_kernel.setdefault(row['kernel'], {'ptx': [], 'sass': [], 'error': None})
            if row['status'] == 'ok':
                times['ptx'].append(row['ptx-seconds'])
                times['sass'].append(row.get('sass-seconds', 0.0))
            else:
                times['error'] = row.get('error')
    return report, per_kernel


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--python', action='append', help='interpreter(s) with numba to measure (default: this one)')
    p.add_argument('--cuda-home', help='CUDA_HOME for the children (its nvvm/lib64 goes first on LD_LIBRARY_PATH)')
    p.add_argument('--arch', default='sm_80')
    p.add_argument('--repeat', type=int, default=3)
    p.add_argument('--mmdet3d', help='a folder holding an mmdet3d package to read the kernel from')
    args = p.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + ([args.mmdet3d] if args.mmdet3d else [])))
    if args.cuda_home:
        env.update(CUDA_HOME=args.cuda_home, LD_LIBRARY_PATH=os.path.join(args.cuda_home, 'nvvm', 'lib64'))
    for python in args.python or [sys.executable]:
        report, per_kernel = bench(python, env, args.arch, args.repeat)
        toolkit = report.get('toolkit') or {}
        print('numba %s, CUDA %s (%s), %s, %d cold processes' % (
            report.get('numba'), toolkit.get('version'), toolkit.get('root'), args.arch, args.repeat))
        if report.get('detail') and not report['rows']:
            print('  no compile: %s' % report['detail'])
            continue
        ours = None
        for kernel, times in per_kernel.items():
            if not times['ptx']:
                print('  %-70s does not compile: %s' % (kernel[-70:], (times['error'] or '')[:100]))
                continue
            ptx, sass = median(times['ptx']), median(times['sass'])
            print('  %-70s PTX %6.2f s  SASS %5.2f s' % (kernel[-70:], ptx, sass))
            if kernel.startswith('kradar_plugin'):
                ours = ptx
        theirs = [median(t['ptx']) for k, t in per_kernel.items() if k.startswith('mmdet3d') and t['ptx']]
        if ours and theirs:
            print('  mmdet3d / kradar_plugin PTX time: %.2fx' % (theirs[0] / ours))
        paths = ['%s=%s' % (k.split(':')[0].split(' ')[0], k.split(' ')[-1].split(':')[0]) for k in per_kernel
                 if k.startswith('mmdet3d')]
        paths.append('kradar_plugin=%s' % os.path.join(ROOT, 'kradar_plugin', 'ops', 'cuda_kernel.py'))
        proc = subprocess.run([python, '-c', CACHE_PROBE] + paths, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
        if proc.returncode == 0:
            cache = json.loads(proc.stdout.splitlines()[-1])
            print('  numba cache: cuda.jit takes cache=: %s; declared cache=True: %s' % (
                'yes' if cache['takes-cache'] else 'no',
                ', '.join('%s %s' % (k, 'yes' if v else 'no') for k, v in cache['declared'].items())))


if __name__ == '__main__':
    main()
