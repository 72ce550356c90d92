"""Structure-aware fuzzing of the loader and the input validation (hypothesis strategies and the one check).

Shared by ``test_fuzz_loading.py`` (a short deterministic run in the suite) and ``benchmarks/fuzz_loading.py``
(a longer run that counts iterations and findings, optionally through the child process).

What is mutated:

* **pickles**: valid K-Radar pickles (results, detections, GT annotations, infos, conditions; protocols 2,
  4 and the highest) changed at their opcode boundaries (``pickletools.genops``): a byte flipped, random
  bytes inserted, an opcode deleted, duplicated or moved, two opcodes swapped, an opcode byte replaced by
  another opcode, a memo index (GET/PUT) changed, an integer argument or a length field set to an extreme,
  the stream truncated;
* **structures**: valid results/annotations/infos/conditions with one or more slots (at any level) replaced
  by a hostile value (wrong types, NaN/inf, huge ints, nested lists, wrong shapes and dtypes, object
  arrays, empty and 0-d arrays), then pickled (or written as JSON for conditions);
* **JSON conditions**: valid condition lists changed structurally (as above, plus NaN/Infinity tokens, deep
  nesting) and as text (truncated, bytes flipped, a byte-order mark, invalid UTF-8).

What must hold for each input (:func:`check`): reading and converting it ends either with content or with
the documented failure, one line naming the file (a ``safe_load.LoadError`` / the validation's
``ValueError``; never an exception of another type, which ``safe_load`` would show as "unexpected
content"), or the memory limit; within :data:`HANG_S`; and the process survives (a crash would end the
test run; the benchmark reads in the child process, which names a crash).
"""
import io
import json
import os
import pickle
import pickletools
import struct
import time

import numpy as np
from hypothesis import strategies as st

from kradar_plugin.loading import safe_load

#: a read longer than this is a hang (the inputs are a few KB)
HANG_S = 10.0
#: small limits, so that a mutated length costs little
LIMITS = safe_load.Limits(max_file_mb=4, max_array_elements=200000, max_elements=400000, memory_mb=256,
                          seconds=HANG_S)
CLASSES = ('Sedan', 'Bus or Truck', 'Pedestrian')
KINDS = ('results', 'dt_annos', 'gt_annos', 'infos', 'conditions')


def _annos(rs, n, score):
    out = {'name': np.array(['Sedan', 'Pedestrian', 'Bus or Truck'][:n] or ['Sedan'])[:n],
           'truncated': np.zeros(n), 'occluded': np.zeros(n, dtype=np.int64), 'alpha': rs.rand(n),
           'bbox': np.tile([50.0, 50.0, 150.0, 150.0], (n, 1)), 'location': rs.rand(n, 3) * 20,
           'dimensions': rs.rand(n, 3) + 1, 'rotation_y': rs.rand(n)}
    if score:
        out['score'] = rs.rand(n)
    return out


def valid(kind, seed=0):
    """A small valid input of ``kind`` (3 frames)."""
    rs = np.random.RandomState(seed)
    if kind == 'results':
        return [{'pts_bbox': {'boxes_3d': rs.rand(n, 7).astype(np.float32), 'scores_3d': rs.rand(n).astype(
            np.float32), 'labels_3d': rs.randint(0, 3, n)}} for n in (2, 0, 3)]
    if kind in ('dt_annos', 'gt_annos'):
        return [_annos(rs, n, kind == 'dt_annos') for n in (2, 0, 3)]
    conditions = [{'road_type': 'urban', 'capture_time': 'day', 'climate': 'normal', 'sequence': '1'},
                  {'road_type': 'highway', 'capture_time': 'night', 'climate': 'rain', 'sequence': '2'},
                  {'road_type': 'urban', 'capture_time': 'day', 'climate': 'fog', 'sequence': '2'}]
    if kind == 'conditions':
        return conditions
    return [dict(conditions[i], annos=dict((k, v) for k, v in _annos(rs, n, False).items()), frame=i)
            for i, n in enumerate((2, 0, 3))]


def converter(kind):
    """What ``kradar-eval`` runs on the content of an input of ``kind`` (in its child process)."""
    from kradar_plugin.evaluation import conditions
    from kradar_plugin.evaluation.inputs.kradar_columns import gather_infos, gather_result_frames, info_list
    from kradar_plugin.evaluation.inputs.npz_layout import annos_side, result_frames
    from kradar_plugin.evaluation.validation import check_side
    if kind == 'results':
        return lambda content: result_frames(content, CLASSES, gather_result_frames)
    if kind in ('dt_annos', 'gt_annos'):
        return lambda content: annos_side(content, kind, None, check_side)
    if kind == 'infos':
        def infos(content):
            frames = info_list(content)
            return gather_infos(frames), conditions.from_infos(frames)
        return infos
    return conditions.rows_of


# -- pickles mutated at their opcode boundaries -------------------------------------------------------------

_OPCODE_BYTES = sorted(set(op.code.encode('latin-1') for op in pickletools.opcodes))
_MEMO_OPS = {'BINGET': '<B', 'LONG_BINGET': '<I', 'BINPUT': '<B', 'LONG_BINPUT': '<I'}
_INT_OPS = {'BININT1': '<B', 'BININT2': '<H', 'BININT': '<i'}
_LENGTH_OPS = {'SHORT_BINUNICODE': '<B', 'SHORT_BINBYTES': '<B', 'SHORT_BINSTRING': '<B', 'BINUNICODE': '<I',
               'BINBYTES': '<I', 'BINSTRING': '<i', 'BINUNICODE8': '<Q', 'BINBYTES8': '<Q',
               'BYTEARRAY8': '<Q', 'LONG1': '<B', 'LONG4': '<i', 'FRAME': '<Q'}
_EXTREMES = (0, 1, 2, 7, 255, 256, 65535, 2 ** 31 - 1, 2 ** 32 - 1, -1, -2 ** 31)


def ops_of(data):
    """[(name, start, end)] of the opcodes of ``data`` (as far as it parses)."""
    out = []
    try:
        ops = list(pickletools.genops(data))
    except Exception:  # noqa: BLE001 - a mutated stream: its parsable prefix
        return out
    for i, (op, _, pos) in enumerate(ops):
        end = ops[i + 1][2] if i + 1 < len(ops) else len(data)
        out.append((op.name, pos, end))
    return out


def _pack(fmt, value):
    size = struct.calcsize(fmt)
    return (value % (1 << (8 * size))).to_bytes(size, 'little')


def mutate(data, mutation):
    """``data`` with one ``mutation`` = (what, a, b, blob) applied (a, b in [0, 1) pick the places)."""
    what, a, b, blob = mutation
    ops = ops_of(data) or [('', 0, len(data))]
    op = ops[int(a * len(ops))]
    other = ops[int(b * len(ops))]
    name, start, end = op
    if what == 'flip':
        if not data:
            return blob[:1]
        at = int(a * len(data))
        return data[:at] + bytes([data[at] ^ (1 << int(b * 8))]) + data[at + 1:]
    if what == 'insert':
        return data[:start] + blob + data[start:]
    if what == 'delete':
        return data[:start] + data[end:]
    if what == 'truncate':
        return data[:start]
    if what == 'duplicate':
        return data[:other[1]] + data[start:end] + data[other[1]:]
    if what == 'swap':
        (s1, e1), (s2, e2) = sorted([(start, end), (other[1], other[2])])
        if e1 > s2:
            return data
        return data[:s1] + data[s2:e2] + data[e1:s2] + data[s1:e1] + data[e2:]
    if what == 'opcode':
        code = _OPCODE_BYTES[int(b * len(_OPCODE_BYTES))]
        return data[:start] + code + data[start + 1:]
    if what == 'memo':
        memo = [o for o in ops if o[0] in _MEMO_OPS] or [op]
        name, start, end = memo[int(a * len(memo))]
        fmt = _MEMO_OPS.get(name)
        if fmt is None:
            return data
        value = _EXTREMES[int(b * len(_EXTREMES))] if blob[:1] == b'x' else int(b * 64)
        return data[:start + 1] + _pack(fmt, value) + data[start + 1 + struct.calcsize(fmt):]
    if what in ('int', 'length'):
        table = _INT_OPS if what == 'int' else _LENGTH_OPS
        found = [o for o in ops if o[0] in table] or [op]
        name, start, end = found[int(a * len(found))]
        fmt = table.get(name)
        if fmt is None:
            return data
        return data[:start + 1] + _pack(fmt, _EXTREMES[int(b * len(_EXTREMES))]) + \
            data[start + 1 + struct.calcsize(fmt):]
    raise ValueError(what)


MUTATIONS = ('flip', 'insert', 'delete', 'truncate', 'duplicate', 'swap', 'opcode', 'memo', 'int', 'length')
_unit = st.floats(min_value=0.0, max_value=1.0, exclude_max=True, allow_nan=False)
mutations = st.lists(st.tuples(st.sampled_from(MUTATIONS), _unit, _unit, st.binary(min_size=1, max_size=12)),
                     min_size=1, max_size=3)


def protocols():
    return sorted(set((2, 4, pickle.HIGHEST_PROTOCOL)))


def mutated_pickles():
    """(kind, mutated pickle bytes)."""
    def build(args):
        kind, protocol, seed, muts = args
        data = pickle.dumps(valid(kind, seed), protocol=protocol)
        for m in muts:
            data = mutate(data, m)
        return kind, data
    return st.tuples(st.sampled_from(KINDS), st.sampled_from(protocols()), st.integers(0, 3), mutations).map(build)


# -- valid structures with hostile values in their slots ----------------------------------------------------

def _hostile_values():
    arrays = st.sampled_from([
        np.array([np.nan, 1.0]), np.array([np.inf, -np.inf]), np.array([1e308]) * 10 if False else np.array([1e308]),
        np.zeros((2, 3, 4)), np.zeros(0), np.array(5.0), np.array(['a', 'b']), np.array([True]),
        np.array([2 ** 62], dtype=np.int64), np.array([-1]), np.arange(7, dtype=np.uint8), np.zeros((1, 7), '>f8'),
        np.array([1 + 2j]), np.array([b'x']), np.asfortranarray(np.zeros((2, 7))), np.zeros((3, 0)),
        np.array([None, 1], dtype=object), np.array(['Sedan', 7], dtype=object), np.float32(np.nan),
        np.int64(-5), np.zeros(40000)])
    plain = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10 ** 40), max_value=10 ** 40),
                      st.sampled_from([10 ** 30, -(10 ** 400), 2 ** 63, -1, 0]),
                      st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20), st.binary(max_size=20))
    containers = st.recursive(plain | arrays, lambda inner: st.lists(inner, max_size=4) |
                              st.dictionaries(st.sampled_from(['name', 'annos', 'boxes_3d', 'pts_bbox', 'x']),
                                              inner, max_size=3) | st.tuples(inner, inner), max_leaves=8)
    nested = st.integers(1, 60).map(lambda depth: _nest(depth))
    return st.one_of(plain, arrays, containers, nested)


def _nest(depth):
    value = [1.0]
    for _ in range(depth):
        value = [value]
    return value


def slots(obj, path=()):
    """Every (path) to a value inside ``obj`` (lists, tuples, dicts), ``()`` the whole."""
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.extend(slots(v, path + (k,)))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out.extend(slots(v, path + (i,)))
    return out


def replaced(obj, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, dict):
        out = dict(obj)
        out[head] = replaced(obj[head], rest, value)
        return out
    out = list(obj)
    out[head] = replaced(obj[head], rest, value)
    return tuple(out) if isinstance(obj, tuple) else out


def hostile_structures():
    """(kind, content) with 1-3 slots of a valid content replaced."""
    def build(args):
        kind, seed, changes = args
        obj = valid(kind, seed)
        for where, value in changes:
            places = slots(obj)
            obj = replaced(obj, places[int(where * len(places))], value)
        return kind, obj
    return st.tuples(st.sampled_from(KINDS), st.integers(0, 3),
                     st.lists(st.tuples(_unit, _hostile_values()), min_size=1, max_size=3)).map(build)


def structure_files():
    """(kind, file bytes, suffix): the hostile structures pickled, or (conditions) as JSON where they can be."""
    def build(args):
        (kind, obj), protocol, as_json = args
        if kind == 'conditions' and as_json:
            try:
                return kind, json.dumps(obj, default=_json_default).encode('utf-8'), '.json'
            except (TypeError, ValueError):
                pass
        return kind, pickle.dumps(obj, protocol=protocol), '.pkl'
    return st.tuples(hostile_structures(), st.sampled_from(protocols()), st.booleans()).map(build)


def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes):
        return value.decode('latin-1')
    raise TypeError(type(value).__name__)


_TEXT_EDITS = ('truncate', 'flip', 'bom', 'invalid_utf8', 'nan', 'deep', 'insert')


def json_texts():
    """(\"conditions\", JSON bytes, '.json'): a valid or hostile condition list, then edited as text."""
    def build(args):
        (kind, obj), edits = args
        try:
            text = json.dumps(obj, default=_json_default).encode('utf-8')
        except (TypeError, ValueError):
            text = json.dumps(valid('conditions')).encode('utf-8')
        for what, a, blob in edits:
            at = int(a * (len(text) + 1))
            if what == 'truncate':
                text = text[:at]
            elif what == 'flip' and text:
                at = min(at, len(text) - 1)
                text = text[:at] + bytes([text[at] ^ 0x20]) + text[at + 1:]
            elif what == 'bom':
                text = b'\xef\xbb\xbf' + text
            elif what == 'invalid_utf8':
                text = text[:at] + b'\xff\xfe' + text[at:]
            elif what == 'nan':
                text = text[:at] + b'NaN' + text[at:]
            elif what == 'deep':
                depth = 1 + int(a * 200)
                text = b'[' * depth + text + b']' * depth
            else:
                text = text[:at] + blob + text[at:]
        return 'conditions', text, '.json'
    edits = st.lists(st.tuples(st.sampled_from(_TEXT_EDITS), _unit, st.binary(min_size=1, max_size=8)), max_size=3)
    conds = st.one_of(st.just(('conditions', valid('conditions'))),
                      hostile_structures().filter(lambda ko: ko[0] == 'conditions'))
    return st.tuples(conds, edits).map(build)


# -- the check ------------------------------------------------------------------------------------------------

class Finding(AssertionError):
    """An input the loader or the validation handled against the policy."""


def write(directory, data, suffix='.pkl'):
    path = os.path.join(directory, 'input' + suffix)
    with open(path, 'wb') as f:
        f.write(data)
    return path


def check(path, kind, child=False):
    """Read ``path`` as an input of ``kind`` the way ``kradar-eval`` does; returns the outcome ('ok', 'value',
    'memory'); raises :class:`Finding` for anything else (another exception type, more than one line, a file
    not named, a hang). ``child``: through ``safe_load.read`` (a forked child with its limits)."""
    what = '--' + kind.replace('_', '-')
    job = (what, path, converter(kind))
    start = time.time()
    if child:
        try:
            safe_load.read([job], limits=LIMITS)
            status, value = 'ok', None
        except safe_load.LoadError as exc:
            status, value = 'value', str(exc)
            if 'crashed' in value or 'time limit' in value or 'killed' in value or 'ended with exit code' in value:
                raise Finding('{}: {}'.format(kind, value))
        except Exception as exc:  # noqa: BLE001 - any other failure is a finding
            raise Finding('{}: {}: {}'.format(kind, type(exc).__name__, exc))
    else:
        status, value = safe_load._attempt(job, False, LIMITS)
    elapsed = time.time() - start
    if elapsed > HANG_S:
        raise Finding('{}: reading took {:.1f} s'.format(kind, elapsed))
    if status not in ('ok', 'value', 'memory'):
        raise Finding('{}: status {}: {}'.format(kind, status, value))
    if status == 'value':
        if '\n' in value or repr(path) not in value:
            raise Finding('{}: not one line naming the file: {!r}'.format(kind, value[:500]))
        if 'unexpected content' in value:
            raise Finding('{}: an exception other than the validation\'s ValueError: {}'.format(kind, value[:500]))
    return status


def load_bytes(data):
    """The content of pickle ``data`` under the policy (in process), for tests of a mutation itself."""
    from kradar_plugin.loading import safe_pickle
    return safe_pickle.load(io.BytesIO(data), limits=LIMITS.pickle_limits())
