"""A longer fuzz of the loader and the input validation: the strategies of ``tests/evaluation/_fuzz.py``.

Mutated valid pickles, hostile values in valid structures and edited JSON conditions, read and converted as
``kradar-eval`` does, for ``--seconds``: in process (fast), or with ``--child`` through ``safe_load.read``
(the forked child with its address-space and time limits, which names a crash or a hang). Prints the
iterations, the outcomes (content read, one-line error, memory limit) and every finding: an exception other
than the one-line error, a message of several lines or not naming the file, a read past the hang limit, a
crash. Each finding's input is saved under ``--out`` to replay it.

    python benchmarks/fuzz_loading.py [--seconds 120] [--child] [--seed 0] [--out DIR]
"""
import argparse
import collections
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--seconds', type=float, default=120.0)
    p.add_argument('--child', action='store_true', help='read each input in a forked child (slower)')
    p.add_argument('--seed', type=int, default=0)
    p.add_argument('--batch', type=int, default=200, help='examples per hypothesis run')
    p.add_argument('--out', default=None, help='where to save the inputs of findings')
    args = p.parse_args(argv)
    import warnings
    warnings.simplefilter('ignore')       # numpy's warnings on hostile values: the outcome is what counts
    from hypothesis import HealthCheck, given, seed, settings
    from tests.evaluation import _fuzz
    out = args.out or tempfile.mkdtemp(prefix='kradar_fuzz_findings_')
    work = tempfile.mkdtemp(prefix='kradar_fuzz_')
    strategies = [('mutated pickles', _fuzz.mutated_pickles().map(lambda c: (c[0], c[1], '.pkl'))),
                  ('hostile structures', _fuzz.structure_files()), ('edited JSON', _fuzz.json_texts())]
    outcomes = collections.Counter()
    findings = collections.OrderedDict()
    iterations = collections.Counter()
    start = time.time()
    round_ = 0
    label_now = [None]
    while time.time() - start < args.seconds:
        for label, strategy in strategies:
            if time.time() - start >= args.seconds:
                break

            @settings(max_examples=args.batch, deadline=None, database=None, print_blob=False,
                      suppress_health_check=list(HealthCheck))
            @seed(args.seed * 1000003 + round_)
            @given(strategy)
            def run(case):
                kind, data, suffix = case
                iterations[label_now[0]] += 1
                path = _fuzz.write(work, data, suffix)
                try:
                    outcomes[(kind, _fuzz.check(path, kind, child=args.child))] += 1
                except _fuzz.Finding as exc:
                    key = str(exc).replace(repr(path), '<file>')[:200]
                    if key not in findings:
                        saved = os.path.join(out, 'finding_{}{}'.format(len(findings), suffix))
                        with open(saved, 'wb') as f:
                            f.write(data)
                        findings[key] = (saved, kind)
                    outcomes[(kind, 'finding')] += 1
            label_now[0] = label
            run()
        round_ += 1
    elapsed = time.time() - start
    total = sum(iterations.values())
    print('{} inputs in {:.0f} s ({:.0f}/s), {}; load average {:.2f}'.format(
        total, elapsed, total / elapsed, 'each in a child process' if args.child else 'in process',
        os.getloadavg()[0]))
    for label in iterations:
        print('  {:20s} {:7d}'.format(label, iterations[label]))
    print('outcomes (kind, outcome): ' + ', '.join('{}/{}: {}'.format(k, o, n) for (k, o), n in sorted(
        outcomes.items())))
    print('{} distinct findings'.format(len(findings)))
    for key, (saved, kind) in findings.items():
        print('  [{}] {}\n      input: {}'.format(kind, key, saved))
    return 1 if findings else 0


if __name__ == '__main__':
    sys.exit(main())
