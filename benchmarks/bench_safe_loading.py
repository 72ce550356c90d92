"""Benchmark of reading a legitimate K-Radar-sized results file under the untrusted-file policy.

17,535 frames (K-Radar's test split) of mmdet3d results as our runner pickles them (protocol 4:
``{'pts_bbox': {'boxes_3d' (N, 7) float32, 'scores_3d', 'labels_3d'}}``, Poisson(10) boxes per frame), read
and gathered into the evaluator's columns (``gather_result_frames``), best of ``--repeat``, same process:

* before, in process: the name-allowlist unpickler that numpy's own reconstruction runs under (what
  ``kradar-eval`` did before the rebuild), then the same gathering;
* before, worker: the same in a forked worker, the columns back through a pipe: what ``kradar-eval`` did
  before with a file this size (its trusted reader used workers for files of 4 MiB and more);
* after: ``safe_load.read`` (safe_pickle's rebuild from checked parts, the expanded-size check, the child
  process with its limits, the columns back through a pipe);
* after, in process: ``safe_load.load_file`` and the gathering, without the child (where no fork exists).

The figures to keep at most 1.5: after / before worker (the same process layout as before) and after in
process / before in process. after / before in process is printed too: it adds the child's own cost (the
fork, the child's page faults on every page it writes, the transfer of the columns).

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
        from kradar_plugin.loading.safe_pickle import ALLOWED
        if (module, name) not in ALLOWED:
            raise pickle.UnpicklingError(name)
        return super(_NamesOnly, self).find_class(module, name)


def _time(fn):
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _worker(conn, path, before):
    conn.send(before())
    conn.close()


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument('--frames', type=int, default=17535)
    p.add_argument('--repeat', type=int, default=5)
    args = p.parse_args(argv)
    from kradar_plugin.loading import safe_load
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

    def before_worker():
        import multiprocessing
        context = multiprocessing.get_context('fork')
        receive, send = context.Pipe(duplex=False)
        process = context.Process(target=_worker, args=(send, path, before), daemon=True)
        process.start()
        send.close()
        try:
            return receive.recv()
        finally:
            receive.close()
            process.join()

    def after():
        return safe_load.read([('--results', path, convert)])[0]

    def after_in_process():
        return convert(safe_load.load_file(path, '--results'))

    a, b, c, d = before(), after(), after_in_process(), before_worker()
    assert all(np.array_equal(a.arrays[k], x.arrays[k]) for x in (b, c, d) for k in a.arrays)
    times = dict((fn.__name__, []) for fn in (before, before_worker, after, after_in_process))
    for _ in range(args.repeat):           # interleaved: a change of the machine's load hits all alike
        for fn in (before, before_worker, after, after_in_process):
            times[fn.__name__].append(_time(fn))
    t_before, t_worker, t_after, t_in = [min(times[k]) for k in ('before', 'before_worker', 'after',
                                                                 'after_in_process')]
    print('load average {:.2f} ({} CPUs); {} frames, {:.1f} MB; best of {}'.format(
        os.getloadavg()[0], os.cpu_count(), args.frames, os.path.getsize(path) / 1e6, args.repeat))
    print('before, in process (names only):        {:.3f} s'.format(t_before))
    print('before, worker (names only):            {:.3f} s'.format(t_worker))
    print('after (rebuild + child process):        {:.3f} s   / before worker {:.2f}   / before in process '
          '{:.2f}'.format(t_after, t_after / t_worker, t_after / t_before))
    print('after, in process:                      {:.3f} s   / before in process {:.2f}'.format(
        t_in, t_in / t_before))


if __name__ == '__main__':
    main()
