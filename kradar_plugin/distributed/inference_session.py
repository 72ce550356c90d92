"""One rank's evaluation inference, between the framework's loop and its data loader and model: it names
the sample that failed, keeps a partial record, resumes from one, and (opt-in) skips bad samples.

The adapter replaces the loop's data loader by :meth:`InferenceSession.batches` and routes each model call
through :meth:`InferenceSession.run_batch`. The session walks this rank's batches in the sampler's order:

- samples a record of the same evaluation holds are handed back from it (``recorded`` groups: the adapter
  yields a placeholder for them and the model is not called);
- the others are loaded by a DataLoader like the loop's own over exactly those indices, its dataset and collate
  wrapped (:class:`GuardedDataset`, :class:`GuardedCollate`) so that a sample that raises while loading, also
  in a worker process, arrives as a :class:`FailedSample` naming its index;
- a failure (loading or forward) either raises, annotated with the sample's index and identity and the record
  flushed first, or, with ``skip_max``, is recorded and its position filled with ``None`` (every rank still
  returns one entry per sampler index). torch is imported inside the functions that build a DataLoader.
"""
import itertools
import sys
import time
import traceback

from . import inference_record as records
from .failfast import add_note
from .sample_identity import describe, identify


class SampleError(RuntimeError):
    """A sample failed in a worker process and its exception could not be carried to this one."""


class SkipLimitError(RuntimeError):
    """More samples failed than ``--skip-bad-samples`` allows."""


class FailedSample(object):
    """What a guarded dataset returns for a sample whose loading raised (picklable; the exception object
    only when it pickles)."""

    def __init__(self, index, exc, text):
        self.index = int(index)
        self.exc_type = type(exc).__name__
        self.message = str(exc)
        self.traceback = text
        self.exc = exc

    def __getstate__(self):
        import pickle
        state = dict(self.__dict__)
        try:
            pickle.loads(pickle.dumps(self.exc))
        except Exception:
            state['exc'] = None
        return state


class GuardedDataset(object):
    """``dataset[i]`` or a :class:`FailedSample` for ``i`` (map-style; runs in the loader's workers)."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        try:
            return self.dataset[index]
        except Exception as exc:
            return FailedSample(index, exc, traceback.format_exc())


class FailedBatch(object):
    """A batch with failed samples: ``failures`` and the collated rest (``data``; None if none is left)."""

    def __init__(self, failures, data):
        self.failures, self.data = failures, data


class GuardedCollate(object):
    """The loader's collate over the samples that loaded; a :class:`FailedBatch` when some did not."""

    def __init__(self, collate):
        self.collate = collate

    def __call__(self, items):
        failed = [x for x in items if isinstance(x, FailedSample)]
        if not failed:
            return self.collate(items)
        good = [x for x in items if not isinstance(x, FailedSample)]
        return FailedBatch(failed, self.collate(good) if good else None)


class Options(object):
    """``resume`` (bool), ``skip_max`` (None: fail fast; 'auto': 1% of the dataset; else a count),
    record interval (``interval_samples``, ``interval_s``)."""

    def __init__(self, resume=True, skip_max=None, interval_samples=records.INTERVAL_SAMPLES,
                 interval_s=records.INTERVAL_S, record=True):
        self.resume, self.skip_max, self.record = bool(resume), skip_max, bool(record)
        self.interval_samples, self.interval_s = interval_samples, interval_s

    def limit(self, size):
        if self.skip_max is None:
            return None
        if self.skip_max == 'auto':
            return max(1, size // 100)
        return int(self.skip_max)


class Group(object):
    """Consecutive sampler positions handled together: recorded (``results``) or inferred."""

    def __init__(self, indices, recorded=None):
        self.indices = list(indices)
        self.recorded = recorded
        self.failed = {}


def plan(batches, done):
    """The loader's batches split into runs of recorded and of missing indices, in order."""
    groups = []
    for batch in batches:
        for recorded, run in itertools.groupby(batch, lambda i: i in done):
            run = list(run)
            groups.append(Group(run, [done[i] for i in run] if recorded else None))
    return groups


def loader_batches(loader):
    """The dataset indices of each batch the loader yields, in order."""
    batch_sampler = getattr(loader, 'batch_sampler', None)
    if batch_sampler is not None:
        return [[int(i) for i in b] for b in batch_sampler]
    return [[int(i)] for i in (loader.sampler if getattr(loader, 'sampler', None) is not None
                               else range(len(loader.dataset)))]


def make_loader(loader, dataset, batches):
    """A DataLoader like ``loader`` (workers, collate, pinning) over ``batches``, failures caught."""
    from torch.utils.data import DataLoader
    kwargs = dict(batch_sampler=batches, num_workers=loader.num_workers,
                  collate_fn=GuardedCollate(loader.collate_fn), pin_memory=loader.pin_memory,
                  timeout=loader.timeout, worker_init_fn=loader.worker_init_fn)
    if loader.num_workers > 0:
        kwargs['multiprocessing_context'] = loader.multiprocessing_context
        if getattr(loader, 'prefetch_factor', None):
            kwargs['prefetch_factor'] = loader.prefetch_factor
    return DataLoader(GuardedDataset(dataset), **kwargs)


class InferenceSession(object):
    """One evaluation's inference on this rank (see the module docstring). ``encode``/``decode``: the
    adapter's conversion of one sample's result to and from the record's plain form; ``sync``: a barrier
    over the ranks; ``gather``: every rank's object (both collectives, one process: identity)."""

    def __init__(self, loader, directory, fp, options, rank=0, world=1, logger=None, encode=None, decode=None,
                 sync=None, gather=None):
        self.loader, self.dataset = loader, loader.dataset
        self.directory, self.fp, self.options = directory, fp, options
        self.rank, self.world, self.logger = rank, world, logger
        self.encode = encode or (lambda r: r)
        self.decode = decode or (lambda r: r)
        self.sync = sync or (lambda: None)
        self.gather = gather or (lambda obj: [obj])
        self.writer = None
        self.busy = False
        self.current = None
        self.inferred = 0
        self.resumed = 0
        self.previous, self.caught = None, False   # the SIGTERM handler this session replaced
        self.failures = []          # this rank's failed samples (dicts)
        self.excluded = []          # every rank's, after the loop (skip mode)
        self.limit = options.limit(len(self.dataset))

    def info(self, text, *args):
        if self.logger is not None and self.rank == 0:
            self.logger.info(text, *args)

    def begin(self):
        """Read the records (every rank), then start this rank's record file. Collective."""
        state = records.RecordState()
        if self.options.resume:
            state = records.read_records(self.directory, self.fp)
        elif self.options.record:
            state.foreign = [(p, 'resuming is off') for p in records.read_records(self.directory, self.fp).files]
        self.sync()   # every rank has read the folder before anything in it changes
        for path, why in state.foreign:
            self.info('kradar_plugin: a partial record in %s is of another evaluation (%s): not used; '
                      'starting afresh', self.directory, why)
        for path, lost in state.torn:
            self.info('kradar_plugin: the last write of %s is torn (%d bytes): its samples are recomputed',
                      path, lost)
        if self.rank == 0 and state.foreign:
            records.remove(self.directory, [p for p, _ in state.foreign] +
                           ([records.osp.join(self.directory, records.COMPLETE)] if not state.files else []))
        batches = loader_batches(self.loader)
        wanted = set(i for b in batches for i in b)
        done = dict((i, r) for i, r in state.done.items() if i in wanted)
        self.groups = plan(batches, done)
        self.resumed = len(done)
        self.started = time.time()
        total = sum(len(b) for b in batches)
        if state.done:
            self.info('kradar_plugin: resuming from the partial record in %s: %d of %d samples of this rank '
                      'recorded, %d to infer', self.directory, len(done), total, total - len(done))
        if self.options.record:
            self.writer = records.RecordWriter(self.directory, self.fp, self.rank, self.world,
                                               self.options.interval_samples, self.options.interval_s)
        return self

    def batches(self, placeholder):
        """Yield, in sampler order, the loaded batch of each group to infer and ``placeholder(group)`` for
        recorded ones; ends by closing the record and (skip mode) sharing the failures. Collective at
        its end."""
        missing = [g.indices for g in self.groups if g.recorded is None]
        loaded = iter(make_loader(self.loader, self.dataset, missing)) if missing else iter(())
        self.catch_signals()
        try:
            for item in self._walk(loaded, placeholder):
                yield item
        finally:
            self.restore_signals()
        self.current = None
        self.end()

    def _walk(self, loaded, placeholder):
        for group in self.groups:
            self.current = group
            if group.recorded is not None:
                yield placeholder(group)
                continue
            data = next(loaded)
            if isinstance(data, FailedBatch):
                for failed in data.failures:
                    self.sample_failed(group, failed.index, failed.exc, failed.exc_type, failed.message,
                                       failed.traceback, 'loading')
                data = data.data
                if data is None:
                    yield placeholder(group)
                    continue
            yield data

    # -- a rank stopped by the launcher (SIGTERM after another rank failed) flushes its record first ------
    def catch_signals(self):
        """Install the SIGTERM handler for the inference (main thread only; the previous one kept)."""
        import signal
        import threading
        if self.writer is None or self.caught or threading.current_thread() is not threading.main_thread():
            return
        try:
            previous = signal.signal(signal.SIGTERM, self._terminated)
        except (ValueError, OSError):   # not the main thread of the interpreter
            return
        self.previous, self.caught = signal.SIG_DFL if previous is None else previous, True

    def restore_signals(self):
        """Put the previous SIGTERM handler back (idempotent; main thread only)."""
        import signal
        if not self.caught:
            return
        try:
            signal.signal(signal.SIGTERM, self.previous)
            self.caught = False
        except (ValueError, OSError):   # a generator closed in another thread: the adapter restores it
            pass

    def _terminated(self, signum, frame):
        """Flush the record (unless a write is under way), then hand the signal to the previous handler."""
        import os
        import signal
        if not self.busy:
            self.busy = True
            self.flush()
        previous = self.previous
        self.restore_signals()
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            os.kill(os.getpid(), signum)   # the default action: end as a SIGTERM would have

    def sample_failed(self, group, index, exc, exc_type, message, text, stage):
        """Record a failed sample; raise (annotated) unless skipping, or past the limit."""
        fields = identify(self.dataset, index)
        failure = dict(index=int(index), identity=[list(f) for f in fields], type=exc_type, message=message,
                       stage=stage, rank=self.rank)
        self.failures.append(failure)
        group.failed[index] = failure
        if self.writer is not None:
            self.writer.add_failure(failure)
        if self.limit is None or len(self.failures) > self.limit:
            self.flush()
            note = 'kradar_plugin: {} failed while {} on rank {}: {}: {}'.format(
                describe(index, fields), stage, self.rank, exc_type, message)
            if self.writer is not None:
                note += '\nThe predictions computed so far are recorded in {}; a relaunch of the same ' \
                        'evaluation infers only what is missing.'.format(self.directory)
            if self.limit is not None:
                note = self.limit_message(self.failures) + '\n' + note
            if exc is None:
                exc = SampleError('{}: {}'.format(exc_type, message))
            if text and getattr(exc, '__traceback__', None) is None:
                note += '\nTraceback in the DataLoader worker:\n' + text.rstrip('\n')
            raise add_note(exc, note)
        if self.logger is not None:
            self.logger.warning('kradar_plugin: skipping %s (%s: %s), failed while %s', describe(index, fields),
                                exc_type, message, stage)

    def limit_message(self, failures):
        return '{} samples failed, more than --skip-bad-samples allows ({}): {}'.format(
            len(failures), self.limit, '; '.join('{}: {}: {}'.format(
                describe(f['index'], f['identity']), f['type'], f['message']) for f in failures))

    def run_batch(self, infer, one=None):
        """The per-sample results of the current group: recorded ones, or ``infer()`` (the framework's
        model call on the loaded batch), with ``None`` for failed samples. A forward that raises is, when
        skipping, retried sample by sample through ``one(index)``; otherwise it raises, naming the batch."""
        group = self.current
        if group is None:
            return infer()
        if group.recorded is not None:
            return [self.decode(r) for r in group.recorded]
        good = [i for i in group.indices if i not in group.failed]
        results = {}
        if good:
            try:
                out = list(infer())
            except Exception as exc:
                out = self.forward_failed(group, good, exc, one)
            if len(out) == len(good):
                results = dict(zip(good, out))
                self.record(good, out)
            else:
                raise RuntimeError('the model returned {} results for a batch of {} samples'.format(
                    len(out), len(good)))
        return [results.get(i) for i in group.indices]

    def forward_failed(self, group, good, exc, one):
        if self.limit is None or one is None:
            self.flush()
            names = '; '.join(describe(i, identify(self.dataset, i)) for i in good)
            failure = dict(index=int(good[0]), batch=[int(i) for i in good], type=type(exc).__name__,
                           message=str(exc), stage='inference', rank=self.rank)
            if self.writer is not None:
                self.writer.add_failure(failure)
                self.writer.flush()
            raise add_note(exc, 'kradar_plugin: the model failed on rank {} on a batch of {}: {}\nThe '
                                'predictions computed so far are recorded in {}.'.format(
                                    self.rank, len(good), names, self.directory))
        out = []
        for index in good:
            try:
                out.append(one(index))
            except Exception as again:
                self.sample_failed(group, index, again, type(again).__name__, str(again), None, 'inference')
                out.append(None)
        return out

    def record(self, indices, results):
        self.inferred += len(indices)
        if self.writer is None:
            return
        keep = [(i, r) for i, r in zip(indices, results) if r is not None]
        encoded = [self.encode(r) for _, r in keep]
        self.busy = True    # a SIGTERM meanwhile flushes nothing half-added (the last flush stays on disk)
        try:
            self.writer.add([i for i, _ in keep], encoded)
            if self.writer.due():
                self.writer.flush()
        finally:
            self.busy = False

    def flush(self):
        if self.writer is not None:
            try:
                self.writer.flush()
            except Exception as exc:   # never hide the failure being reported
                sys.stderr.write('kradar_plugin: could not flush the partial record: {}\n'.format(exc))

    def end(self):
        seconds = time.time() - self.started
        if self.writer is not None:
            self.writer.close()
            self.info('kradar_plugin: rank %d inferred %d samples and took %d from the record in %.2f s; writing '
                      'the record took %.3f s (%.2f%%)', self.rank, self.inferred, self.resumed, seconds,
                      self.writer.seconds, 100.0 * self.writer.seconds / max(seconds, 1e-9))
        else:
            self.info('kradar_plugin: rank %d inferred %d samples in %.2f s (no partial record)', self.rank,
                      self.inferred, seconds)
        if self.limit is None:
            return
        every = [f for part in self.gather(self.failures) for f in part]
        first = {}
        for failure in sorted(every, key=lambda f: f['index']):
            first.setdefault(failure['index'], failure)
        self.excluded = list(first.values())
        if len(self.excluded) > self.limit:
            raise SkipLimitError(self.limit_message(self.excluded))

    def complete(self, results_path):
        """The full predictions file is written (rank 0): the record says so."""
        if self.options.record:
            records.mark_complete(self.directory, results_path)

    def finished(self):
        """The evaluation succeeded (rank 0): the record goes."""
        if self.options.record:
            records.remove(self.directory)


def excluded_note(excluded):
    """``N samples excluded: <each>`` for the log and the results."""
    return '{} samples excluded: {}'.format(len(excluded), '; '.join(
        '{} ({}: {})'.format(describe(f['index'], f.get('identity') or []), f['type'], f['message'])
        for f in excluded))


def _barrier():
    from .eval_support import dist_info
    if dist_info()[1] > 1:
        import torch.distributed as dist
        dist.barrier()


def open_session(loader, work_dir, tag, model, options, logger=None):
    """The begun :class:`InferenceSession` of one evaluation (collective): its record is
    ``work_dir/eval_results/partial/<tag>/``, its fingerprint the evaluated weights, dataset and pipeline."""
    from .eval_support import dist_info, gather
    from .result_codec import decode_result, encode_result, weights_digest
    rank, world = dist_info()
    dataset = loader.dataset
    fp = records.fingerprint(weights_digest(model), getattr(dataset, 'ann_file', ''), len(dataset),
                             getattr(dataset, 'pipeline', ''))
    session = InferenceSession(loader, records.record_dir(work_dir, tag), fp, options, rank, world, logger,
                               encode_result, decode_result, sync=_barrier, gather=gather)
    return session.begin()
