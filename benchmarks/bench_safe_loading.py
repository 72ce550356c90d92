"""Benchmark of reading a legitimate K-Radar-sized results file under the untrusted-file policy.

17,535 frames (K-Radar's test split) of mmdet3d results as our runner pickles them (protocol 4:
``{'pts_bbox': {'boxes_3d' (N, 7) float32, 'scores_3d', 'labels_3d'}}``, Poisson(10) boxes per frame), read
and gathered into the evaluator's columns (``gather_result_frames``), best of ``--repeat``, same process:

* before: the name-allowlist unpickler that numpy's own reconstruction runs under (what ``kradar-eval`` did
  before the rebuild), in process, then the same gathering;
* after: ``safe_load.read`` (safe_pickle's rebuild from checked parts, the expanded-size check, the child
  process with its limits, the columns back through a pipe);
* after, in process: the same without the child (where no fork exists).

The ratio after / before is the figure to keep at most 1.5.

    python benchmarks/bench_safe_loading.py [--frames 17535] [--repeat 5]
"""
import argparse
import gc
import os
import pickle
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def results(n_frames, seed=0):
    rs = np.random.RandomState(seed)
    out = []
    for _ in range(n_frames):
        n = rs.poisson(10)
        out.append({'pts_bbox': {'boxes_3d': rs.rand(n, 7).astype(np.float32),
                                 'scores_3d': rs.rand(n).astype(np.float32), 'labels_3d': rs.randint(0, 3, n)}})
    return out


class _NamesOnly(pickle.Unpickler):
    """The loader before the rebuild: allowed names, numpy's own reconstruction."""

    def find_class(self, module, name):
        from kradar_plugin.evaluation.safe_pickle import ALLOWED
        if (module, name) not in ALLOWED:
            raise pickle.UnpicklingError(name)
        return super(_NamesOnly, self).find_class(module, name)


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--frames', type=int, default=17535)
    p.add_argument('--repeat', type=int, default=5)
    args = p.parse_args(argv)
    from kradar_plugin.evaluation import safe_load
    from kradar_plugin.evaluation.inputs.kradar_columns import gather_result_frames
    classes = ('Sedan', 'Bus or Truck', 'Pedestrian')
    path = os.path.join(tempfile.mkdtemp(prefix='bench_safe_loading_'), 'results.pkl')
    with open(path, 'wb') as f:
        pickle.dump(results(args.frames), f, protocol=4)

    def before():
        enabled = gc.isenabled()
        gc.disable()
        try:
            with open(path, 'rb') as f:
                content = _NamesOnly(f).load()
        finally:
            if enabled:
                gc.enable()
        return gather_result_frames(list(content), classes)

    def convert(content):
        return gather_result_frames(list(content), classes)

    def after():
        return safe_load.read([('--results', path, convert)])[0]

    def after_in_process():
        return convert(safe_load.load_file(path, '--results'))

    a, b, c = before(), after(), after_in_process()
    assert all(np.array_equal(a.arrays[k], x.arrays[k]) for x in (b, c) for k in a.arrays)
    t_before = _best(before, args.repeat)
    t_after = _best(after, args.repeat)
    t_in = _best(after_in_process, args.repeat)
    print('load average {:.2f}; {} frames, {:.1f} MB'.format(os.getloadavg()[0], args.frames,
                                                            os.path.getsize(path) / 1e6))
    print('before (names only, in process): {:.3f} s'.format(t_before))
    print('after (rebuild + child process): {:.3f} s   ratio {:.2f}'.format(t_after, t_after / t_before))
    print('after, in process:               {:.3f} s   ratio {:.2f}'.format(t_in, t_in / t_before))


if __name__ == '__main__':
    main()
