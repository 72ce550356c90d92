"""How long kradar-doctor takes: the quick checks tools/train.py runs on rank 0 before every launch, against
peers measured on the same machine in the same run:

- a bare interpreter start (``python -c pass``) vs ``import kradar_plugin.doctor`` in a fresh interpreter,
- ``run_checks(quick=True)`` (metadata and files only, no subprocess) vs the full ``run_checks()`` and its
  two subprocess probes (torch/numba/mmcv facts; imports of mmdet/mmdet3d/... ``.models``/``.datasets``).

    python benchmarks/bench_doctor.py [--repeat 5] [--full-repeat 2]

Prints medians in seconds and the ratios: a benchmark, not a test, because a wall-clock bound depends on the
machine and its load.
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return median(times)


def interpreter(code):
    subprocess.run([sys.executable, '-c', code], cwd=ROOT, check=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--full-repeat', type=int, default=2)
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    from kradar_plugin.doctor import checks, probes, run_checks
    from kradar_plugin.doctor.report import summary

    bare = timed(lambda: interpreter('pass'), args.repeat)
    imported = timed(lambda: interpreter('import kradar_plugin.doctor'), args.repeat)
    run_checks(quick=True)  # warm the metadata caches of this process once
    quick = timed(lambda: run_checks(quick=True), args.repeat)
    full = timed(lambda: run_checks(), args.full_repeat)

    facts = probes.gather(quick=True)
    want = set(w for w in ('numpy', 'numba', 'torch') if facts.get(w))
    if facts.get('mmcv-full') or facts.get('mmcv'):
        want.add('mmcv')
    framework = timed(lambda: probes.framework_probe(want), args.full_repeat)
    packages = set(p for p, _ in probes.IMPORT_MODULES
                   if facts.get(p) or (p == 'mmcv' and (facts.get('mmcv-full') or facts.get('mmcv-lite'))))
    imports = timed(lambda: probes.import_probe(packages), args.full_repeat) if packages else 0.0

    print('kradar-doctor on %s (Python %s); installed: %s' % (
        os.uname()[1] if hasattr(os, 'uname') else '?', sys.version.split()[0],
        ', '.join('%s %s' % (k, facts[k]) for k in ('numpy', 'numba', 'torch', 'mmcv-full', 'mmcv', 'mmengine',
                                                     'mmdet', 'mmseg', 'mmdet3d') if facts.get(k)) or 'none'))
    rows = [('python -c pass', bare, ''),
            ('python -c "import kradar_plugin.doctor"', imported, '%.2fx a bare start' % (imported / bare)),
            ('run_checks(quick=True)', quick, 'in process, %d checks' % len(checks.CHECKS)),
            ('run_checks()', full, '%.0fx quick' % (full / quick) if quick else ''),
            ('  framework probe (%s)' % (','.join(sorted(want)) or '-'), framework, 'subprocess'),
            ('  import probe (%s)' % (','.join(sorted(packages)) or '-'), imports, 'subprocess')]
    width = max(len(r[0]) for r in rows)
    for label, seconds, note in rows:
        print('%-*s %7.3f s%s' % (width, label, seconds, '   (%s)' % note if note else ''))
    print(summary(run_checks(quick=True)))


if __name__ == '__main__':
    main()
