"""Partial inference records: each rank appends the predictions it computed to its own file under
``work_dir/eval_results/partial/<tag>/``, so that a failed or killed evaluation loses at most one interval.

A record file (``rank<R>of<W>_<pid>_<random>.krrec``, created with ``O_EXCL | O_NOFOLLOW``) is a sequence of
chunks: ``b'KRC1'``, the payload length (8 bytes, big-endian), its SHA-256 (32 bytes), the payload. The
payload is a pickle in the portable form (``files.portable_pickle``) of plain containers and numpy arrays,
read back with the safe unpickler (no code runs on reading). The first chunk holds the evaluation's
fingerprint; later ones ``indices``, ``results`` (encoded by the adapter: tensors and box objects as
tagged numpy) and ``failures``. A chunk cut short or whose digest differs (a torn last write) ends the
file's reading: its samples are recomputed. ``complete.json`` names the full predictions file once written.
"""
import hashlib
import io
import json
import os
import os.path as osp
import struct
import time

MAGIC = b'KRC1'
_HEAD = struct.Struct('>4sQ32s')
SUFFIX = '.krrec'
PARTIAL_DIR = 'partial'
COMPLETE = 'complete.json'
# a record is written every INTERVAL_SAMPLES samples or INTERVAL_S seconds, whichever comes first
INTERVAL_SAMPLES = 256
INTERVAL_S = 20.0
TYPE_KEY = '__kradar_type__'


def record_dir(work_dir, tag):
    from .eval_support import RESULTS_DIR
    return osp.abspath(osp.join(work_dir or '.', RESULTS_DIR, PARTIAL_DIR, tag))


def digest_text(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:16]


def fingerprint(weights, ann_file, length, pipeline):
    """What makes two evaluations the same: checkpoint content (``weights``: a digest of the evaluated
    parameters), the dataset (``ann_file``, ``length``) and the test pipeline (its text, object addresses
    removed). The world size is not part of it."""
    import re
    pipeline = re.sub(r' at 0x[0-9a-fA-F]+', '', str(pipeline))
    return {'weights': str(weights), 'ann_file': str(ann_file), 'length': int(length),
            'pipeline': digest_text(pipeline)}


def evaluation_key(datasets):
    """What identifies an evaluation besides the weights, for a sweep's record: each dataset's ``ann_file``,
    length and pipeline digest (JSON-able)."""
    keys = [fingerprint('', getattr(d, 'ann_file', ''), len(d), getattr(d, 'pipeline', '')) for d in datasets]
    return [dict((k, v) for k, v in key.items() if k != 'weights') for key in keys]


_WHY = {'weights': 'the checkpoint content differs', 'ann_file': 'the dataset (ann_file) differs',
        'length': 'the dataset length differs', 'pipeline': 'the test pipeline differs'}


def mismatch(expected, found):
    """Why a record's fingerprint is not this evaluation's ('' when it is)."""
    if not isinstance(found, dict):
        return 'the record has no fingerprint'
    return ', '.join(_WHY.get(k, k + ' differs') for k in sorted(expected) if found.get(k) != expected[k])


def encode(obj, leaf):
    """``obj`` with dicts, lists and tuples rebuilt and every other value passed through ``leaf``."""
    if isinstance(obj, dict):
        return dict((k, encode(v, leaf)) for k, v in obj.items())
    if isinstance(obj, list):
        return [encode(v, leaf) for v in obj]
    if isinstance(obj, tuple) and not hasattr(obj, '_fields'):
        return tuple(encode(v, leaf) for v in obj)
    return leaf(obj)


def decode(obj, leaf):
    """The inverse of :func:`encode`: ``leaf`` rebuilds each tagged dict (``TYPE_KEY``)."""
    if isinstance(obj, dict):
        if TYPE_KEY in obj:
            return leaf(obj)
        return dict((k, decode(v, leaf)) for k, v in obj.items())
    if isinstance(obj, list):
        return [decode(v, leaf) for v in obj]
    if isinstance(obj, tuple):
        return tuple(decode(v, leaf) for v in obj)
    return obj


def _chunk(payload):
    from kradar_plugin.files.portable_pickle import dumps
    data = dumps(payload)
    return _HEAD.pack(MAGIC, len(data), hashlib.sha256(data).digest()) + data


class RecordWriter(object):
    """One rank's record file: ``add`` samples, ``flush`` when :meth:`due` (or on an exception)."""

    def __init__(self, directory, fp, rank, world, interval_samples=INTERVAL_SAMPLES, interval_s=INTERVAL_S,
                 clock=time.time):
        os.makedirs(directory, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, 'O_NOFOLLOW', 0)
        name = 'rank{}of{}_{}_{}{}'.format(rank, world, os.getpid(), os.urandom(4).hex(), SUFFIX)
        self.path = osp.join(directory, name)
        self.fd = os.open(self.path, flags, 0o644)
        self.interval_samples, self.interval_s, self.clock = interval_samples, interval_s, clock
        self.pending = dict(indices=[], results=[], failures=[])
        self.written, self.last = 0, clock()
        self.seconds = 0.0       # time spent writing (the benchmark's overhead)
        self._write(dict(kind='header', fingerprint=fp, rank=rank, world=world, created=time.time()))

    def _write(self, payload):
        start = time.time()
        data = _chunk(payload)
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]
        self.seconds += time.time() - start

    def add(self, indices, results):
        self.pending['indices'].extend(int(i) for i in indices)
        self.pending['results'].extend(results)

    def add_failure(self, failure):
        self.pending['failures'].append(dict(failure))

    def due(self):
        return (len(self.pending['indices']) >= self.interval_samples
                or (self.pending['indices'] and self.clock() - self.last >= self.interval_s))

    def flush(self):
        if self.fd is None or not (self.pending['indices'] or self.pending['failures']):
            return
        payload, self.pending = self.pending, dict(indices=[], results=[], failures=[])
        payload['kind'] = 'samples'
        self._write(payload)
        self.written += len(payload['indices'])
        self.last = self.clock()

    def close(self):
        if self.fd is not None:
            self.flush()
            os.close(self.fd)
            self.fd = None


class RecordState(object):
    """What the records of a directory hold for one fingerprint: ``done`` {index: encoded result},
    ``failures`` {index: failure dict}, ``torn`` [(file, bytes dropped)], ``foreign`` [(file, why)],
    ``files`` (those read and matching)."""

    def __init__(self):
        self.done = {}
        self.failures = {}
        self.torn = []
        self.foreign = []
        self.files = []
        self.complete = None


def _chunks(data):
    """(payload bytes, ...) of the intact chunks of ``data``; the number of bytes after the last one."""
    out, pos = [], 0
    while pos + _HEAD.size <= len(data):
        magic, size, digest = _HEAD.unpack_from(data, pos)
        body = data[pos + _HEAD.size:pos + _HEAD.size + size]
        if magic != MAGIC or len(body) != size or hashlib.sha256(body).digest() != digest:
            break
        out.append(body)
        pos += _HEAD.size + size
    return out, len(data) - pos


def _load(body):
    from kradar_plugin.loading.safe_pickle import load
    return load(io.BytesIO(body))


def read_records(directory, fp):
    """The :class:`RecordState` of ``directory`` for fingerprint ``fp``."""
    state = RecordState()
    if not osp.isdir(directory):
        return state
    for name in sorted(os.listdir(directory)):
        path = osp.join(directory, name)
        if name == COMPLETE:
            try:
                with open(path) as f:
                    state.complete = json.load(f)
            except (OSError, ValueError):
                pass
            continue
        if not name.endswith(SUFFIX) or osp.islink(path) or not osp.isfile(path):
            continue
        with open(path, 'rb') as f:
            data = f.read()
        bodies, rest = _chunks(data)
        try:
            header = _load(bodies[0]) if bodies else None
        except Exception:
            header = None
        why = mismatch(fp, header.get('fingerprint') if isinstance(header, dict) else None)
        if why:
            state.foreign.append((path, why))
            continue
        state.files.append(path)
        if rest:
            state.torn.append((path, rest))
        for body in bodies[1:]:
            try:
                chunk = _load(body)
            except Exception:
                state.torn.append((path, len(body)))
                break
            for index, result in zip(chunk.get('indices', ()), chunk.get('results', ())):
                state.done[int(index)] = result
            for failure in chunk.get('failures', ()):
                state.failures[int(failure.get('index', -1))] = failure
    state.failures = dict((i, f) for i, f in state.failures.items() if i not in state.done)   # a later run inferred it
    return state


def mark_complete(directory, results_path):
    """``complete.json``: the full predictions file is written (the record is no longer needed)."""
    from kradar_plugin.files.safe_write import open_for_write
    if osp.isdir(directory):
        with open_for_write(osp.join(directory, COMPLETE), 'w') as f:
            json.dump({'results': results_path, 'time': time.time()}, f)


def remove(directory, paths=None):
    """Remove ``paths`` (default: every record file and ``complete.json``), the folder once empty, and the
    ``partial`` folder above it once no record is left there either."""
    if not osp.isdir(directory):
        return
    if paths is None:
        paths = [osp.join(directory, n) for n in os.listdir(directory) if n.endswith(SUFFIX) or n == COMPLETE]
    for path in paths:
        try:
            os.remove(path)
        except OSError:
            pass
    for folder in (directory, osp.dirname(osp.abspath(directory))):
        if osp.basename(folder) != PARTIAL_DIR and folder != directory:
            break
        try:
            os.rmdir(folder)        # only where empty
        except OSError:
            break
