"""Did the checkpoint really load? Read it with a clear error, repair the usual key layouts, and measure
what the model got from it.

mmcv's ``load_checkpoint`` is ``strict=False`` and only prints missing/unexpected keys: a prefix mismatch
can load nothing and the evaluation then scores random weights. This module (torch only to read a file):

- reads a checkpoint through ``kradar_plugin.loading.load_checkpoint`` (nothing in the file runs) and turns a
  truncated, corrupted or refused file into ``CheckpointReadError`` naming the file;
- finds the state dict (``state_dict``/``model`` entries, nested any way) and removes ``module.`` path
  components at any depth (a state dict saved from a DDP/DataParallel wrapper, also around a submodule)
  when that makes the key a model key; the repairs are listed for ONE warning;
- compares the model's parameters and buffers with the checkpoint's entries: loaded / total by count and
  by elements, shape mismatches, unexpected keys, EMA entries, grouped by top-level module (``report``);
- refuses, with ``CheckpointLoadError``, a checkpoint from which less than ``min_loaded`` of the model's
  parameter elements were loaded, naming the unmatched modules and the likely cause.
"""
import math
import os.path as osp
import re
from collections import OrderedDict

from .. import runner_options, settings

REPORT_FILE = 'kradar_checkpoint_report.json'
SCHEMA_VERSION = 1
DEFAULT_MIN_LOADED = runner_options.OPTION['min_loaded'].default
WRAPPER_COMPONENT = 'module'       # the attribute name DDP / DataParallel wrap a module under
NESTED_ENTRIES = ('state_dict', 'model', 'module')  # where checkpoints keep the weights
ROOT_GROUP = '(root)'              # group of keys without a dot (e.g. EMA buffers on the model itself)
EMA_KEY = re.compile(r'^ema_[A-Za-z0-9_]+$')  # mmcv EMAHook / mmdet BaseEMAHook buffer names
_PREVIEW = 5


class CheckpointReadError(RuntimeError):
    """The checkpoint file cannot be read (truncated, corrupted, not a checkpoint)."""


class CheckpointLoadError(RuntimeError):
    """Too little of the model was loaded from the checkpoint."""


def read_checkpoint(filename, map_location='cpu', logger=None, rank_tag='', trust=False):
    """The checkpoint object of ``filename``: a local path through ``kradar_plugin.loading.load_checkpoint``
    (no code in the file runs; ``trust`` or the process's opt-in: full unpickling), any other URI through
    mmcv's/mmengine's CheckpointLoader (downloads).

    A file that exists but cannot be read or is refused gives ``CheckpointReadError`` naming it, its size and
    the reason (prefixed with ``rank_tag``), instead of a pickle/zip traceback."""
    text = str(filename)
    local = osp.expanduser(text[len('file://'):] if text.startswith('file://') else text)
    if '://' in local:
        return _framework_load(filename, map_location, logger, rank_tag)
    # a local path that is not there: FileNotFoundError on every stack
    if not osp.isfile(local):
        raise FileNotFoundError('checkpoint {} can not be found'.format(filename))
    from kradar_plugin.loading.safe_checkpoint import CheckpointError, load_checkpoint
    try:
        return load_checkpoint(local, map_location, trust)
    except CheckpointError as exc:
        raise CheckpointReadError('{}cannot read checkpoint {} ({} bytes): {}'.format(
            rank_tag + ' ' if rank_tag else '', filename, osp.getsize(local), exc.reason)) from None


def _framework_load(filename, map_location, logger, rank_tag):
    """A URI (http, open-mmlab://...) through the installed framework's CheckpointLoader."""
    try:
        from mmcv.runner.checkpoint import _load_checkpoint
    except ImportError:
        from mmengine.runner.checkpoint import _load_checkpoint
    try:
        return _load_checkpoint(filename, map_location, logger)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with the file named
        first = str(exc).strip().splitlines()
        raise CheckpointReadError('{}cannot read checkpoint {}: {}: {}'.format(
            rank_tag + ' ' if rank_tag else '', filename, type(exc).__name__, first[0] if first else '')) from None


def _is_tensor_like(value):
    return hasattr(value, 'shape') and hasattr(value, 'dtype')


def _looks_like_state_dict(mapping):
    return isinstance(mapping, dict) and bool(mapping) and any(_is_tensor_like(v) for v in mapping.values())


def find_state_dict(checkpoint, filename='checkpoint'):
    """(state_dict, path) where path lists the entries walked, e.g. ['state_dict', 'model'].

    The top-level ``state_dict`` entry is mmcv's own layout; any other nesting is a repair."""
    if not isinstance(checkpoint, dict):
        raise CheckpointReadError('checkpoint {} holds a {}, not a dict of weights'.format(
            filename, type(checkpoint).__name__))
    node, path = checkpoint, []
    while not _looks_like_state_dict(node) and len(path) < 8:
        nested = [k for k in NESTED_ENTRIES if isinstance(node.get(k), dict)]
        if not nested:
            break
        path.append(nested[0])
        node = node[nested[0]]
    if _looks_like_state_dict(node):
        return node, path
    raise CheckpointReadError(
        'checkpoint {} has no weights: no tensors at the top level nor under {} (keys: {})'.format(
            filename, '/'.join(repr(k) for k in NESTED_ENTRIES), _preview(sorted(checkpoint))))


def _drop_wrapper_components(key):
    parts = key.split('.')
    kept = [p for p in parts if p != WRAPPER_COMPONENT]
    return '.'.join(kept) if kept else key


def strip_wrapper_prefixes(state_dict, model_keys):
    """Remove ``module.`` path components, at any depth, from keys the model does not have (matched to the
    model key with the same components otherwise). Returns (new OrderedDict, number of keys changed, depths
    seen).

    A key the model has as it is stays as it is (a model may well own a submodule named ``module``)."""
    model_keys = set(model_keys)
    by_bare = {}
    for key in model_keys:
        by_bare.setdefault(_drop_wrapper_components(key), []).append(key)
    out = OrderedDict()
    changed, depths = 0, set()
    for key, value in state_dict.items():
        new = key
        if key not in model_keys and WRAPPER_COMPONENT in key.split('.'):
            bare = _drop_wrapper_components(key)
            targets = by_bare.get(bare, [])
            if len(targets) == 1:
                new = targets[0]
            elif not targets:  # not a model key either way: reported (unexpected) without the wrapper
                new = bare
            if new != key:
                changed += 1
                depths.update(i for i, p in enumerate(key.split('.')) if p == WRAPPER_COMPONENT)
        if new in out and new != key:  # both spellings present: keep the one already there
            continue
        out[new] = value
    return out, changed, sorted(depths)


def apply_revise_keys(state_dict, revise_keys):
    """mmcv's ``revise_keys`` [(pattern, replacement), ...] applied to every key."""
    out = state_dict
    for pattern, replacement in revise_keys or ():
        out = OrderedDict((re.sub(pattern, replacement, k), v) for k, v in out.items())
    return out


def prepare_state_dict(checkpoint, model_keys, filename='checkpoint', revise_keys=None):
    """(state_dict ready to load, repairs): the weights of ``checkpoint`` with their keys matched to the
    model's. ``revise_keys`` other than mmcv's default ``^module.`` strip are applied first (the default is
    covered by the any-depth repair, which also reports it)."""
    state_dict, path = find_state_dict(checkpoint, filename)
    metadata = getattr(state_dict, '_metadata', None)
    repairs = []
    if path and path != ['state_dict']:
        repairs.append("took the weights from the nested entry {} (mmcv reads only a top-level "
                       "'state_dict')".format(''.join('[{!r}]'.format(p) for p in path)))
    custom = [(p, r) for p, r in (revise_keys or ()) if not (r == '' and p in (r'^module\.', '^module.'))]
    state_dict = apply_revise_keys(OrderedDict(state_dict), custom)
    state_dict, changed, depths = strip_wrapper_prefixes(state_dict, model_keys)
    if changed:
        repairs.append("removed the 'module.' wrapper prefix from {} key{} (depth {}: a state dict saved from "
                       "a DDP/DataParallel-wrapped model)".format(changed, 's' if changed != 1 else '',
                                                                  '/'.join(str(d) for d in depths)))
    if metadata is not None:
        state_dict._metadata = metadata
    return state_dict, repairs


def model_entries(model):
    """OrderedDict name -> (shape, 'parameter'|'buffer') of what ``model.state_dict()`` holds (a module
    wrapper is looked through, as mmcv's load_state_dict does)."""
    module = unwrap_model(model)
    import torch
    entries = OrderedDict()
    for name, value in module.state_dict(keep_vars=True).items():
        kind = 'parameter' if isinstance(value, torch.nn.Parameter) else 'buffer'
        entries[name] = (tuple(value.shape), kind)
    return entries


def unwrap_model(model):
    """The module inside DataParallel/DDP (and mmcv's) wrappers."""
    import torch
    wrappers = (torch.nn.DataParallel, torch.nn.parallel.DistributedDataParallel)
    try:
        from mmcv.parallel import is_module_wrapper
    except ImportError:
        is_module_wrapper = None
    while isinstance(model, wrappers) or (is_module_wrapper is not None and is_module_wrapper(model)):
        model = model.module
    return model


def _numel(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _group(key):
    return key.split('.', 1)[0] if '.' in key else ROOT_GROUP


def _counter():
    return {'loaded': 0, 'total': 0, 'loaded_elements': 0, 'total_elements': 0}


def _module_group(groups, key):
    return groups.setdefault(_group(key), {'parameters': _counter(), 'buffers': _counter(), 'missing': 0,
                                           'shape_mismatches': 0, 'unexpected': 0})


def build_report(entries, checkpoint_shapes, filename, repairs=(), min_loaded=DEFAULT_MIN_LOADED):
    """The report (a JSON-able dict) of loading ``checkpoint_shapes`` ({key: shape}) into a model whose
    state dict is ``entries`` (see ``model_entries``)."""
    params, buffers = _counter(), _counter()
    groups = OrderedDict()
    missing, mismatches = [], []
    for key, (shape, kind) in entries.items():
        group = _module_group(groups, key)
        numel = _numel(shape)
        counters = (params, group['parameters']) if kind == 'parameter' else (buffers, group['buffers'])
        for counter in counters:
            counter['total'] += 1
            counter['total_elements'] += numel
        if key not in checkpoint_shapes:
            missing.append(key)
            group['missing'] += 1
            continue
        ck_shape = tuple(checkpoint_shapes[key])
        if ck_shape != tuple(shape):
            mismatches.append({'key': key, 'model': list(shape), 'checkpoint': list(ck_shape)})
            group['shape_mismatches'] += 1
            continue
        for counter in counters:
            counter['loaded'] += 1
            counter['loaded_elements'] += numel
    ema = [k for k in checkpoint_shapes if k not in entries and EMA_KEY.match(k)]
    unexpected = [k for k in checkpoint_shapes if k not in entries and not EMA_KEY.match(k)]
    for key in unexpected:
        _module_group(groups, key)['unexpected'] += 1
    fraction = (params['loaded_elements'] / float(params['total_elements'])
                if params['total_elements'] else 1.0)
    report = OrderedDict([
        ('schema', SCHEMA_VERSION), ('checkpoint', str(filename)), ('loaded_fraction', fraction),
        ('min_loaded', min_loaded), ('ok', not (min_loaded and fraction < min_loaded)), ('parameters', params),
        ('buffers', buffers), ('missing', missing), ('shape_mismatches', mismatches), ('unexpected', unexpected),
        ('ema', {'keys': len(ema), 'evaluated': None}), ('repairs', list(repairs)), ('modules', groups)])
    report['cause'] = likely_cause(report, entries, checkpoint_shapes) if fraction < 1.0 else None
    return report


def percent(fraction):
    """Floor to one decimal: '100.0' only when everything was loaded."""
    return '{:.1f}'.format(math.floor(fraction * 1000.0 + 1e-9) / 10.0)


def summary_line(report):
    """``loaded 100.0% of N parameters (...)`` - the line the log carries for every loaded checkpoint."""
    p, b = report['parameters'], report['buffers']
    extra = []
    mismatches, unexpected = len(report['shape_mismatches']), len(report['unexpected'])
    if mismatches:
        extra.append('{} shape mismatch{}'.format(mismatches, 'es' if mismatches != 1 else ''))
    if unexpected:
        extra.append('{} unexpected key{}'.format(unexpected, 's' if unexpected != 1 else ''))
    if report['ema']['keys']:
        extra.append('{} EMA entries'.format(report['ema']['keys']))
    return 'loaded {}% of {} parameters ({}/{} parameter tensors, {}/{} buffers) from {}{}'.format(
        percent(report['loaded_fraction']), p['total_elements'], p['loaded'], p['total'], b['loaded'],
        b['total'], report['checkpoint'], '; ' + ', '.join(extra) if extra else '')


def module_lines(report, only_incomplete=True):
    """One line per top-level module: what it got from the checkpoint."""
    lines = []
    for name, g in report['modules'].items():
        p = g['parameters']
        complete = p['loaded'] == p['total'] and g['buffers']['loaded'] == g['buffers']['total'] and \
            not g['unexpected']
        if only_incomplete and complete:
            continue
        lines.append('  {}: {}/{} parameter tensors ({}% of {} elements), {}/{} buffers{}'.format(
            name, p['loaded'], p['total'],
            percent(p['loaded_elements'] / float(p['total_elements'])) if p['total_elements'] else '100.0',
            p['total_elements'], g['buffers']['loaded'], g['buffers']['total'], _problems(g)))
    return lines


def _problems(group):
    labels = (('missing', 'missing'), ('shape_mismatches', 'shape mismatches'),
              ('unexpected', 'unexpected in the checkpoint'))
    parts = ['{} {}'.format(group[key], label) for key, label in labels if group[key]]
    return ': ' + ', '.join(parts) if parts else ''


def _common_first_component(keys):
    firsts = set(k.split('.', 1)[0] for k in keys if '.' in k)
    return firsts.pop() if len(firsts) == 1 and all('.' in k for k in keys) else None


def likely_cause(report, entries, checkpoint_shapes):
    """One sentence: prefix, renamed module, different architecture or wrong file."""
    model_keys = set(entries)
    ck_keys = [k for k in checkpoint_shapes if not EMA_KEY.match(k)]
    if not ck_keys:
        return 'the checkpoint holds no model weights (only EMA entries or nothing): the wrong file?'
    loaded = report['parameters']['loaded'] + report['buffers']['loaded']
    unmatched_ck = [k for k in ck_keys if k not in model_keys]
    # a prefix on every checkpoint key the model lacks
    prefix = _common_first_component(unmatched_ck) if unmatched_ck else None
    if prefix:
        stripped = [k[len(prefix) + 1:] for k in unmatched_ck if k.startswith(prefix + '.')]
        hits = sum(1 for k in stripped if k in model_keys)
        if hits >= max(1, len(stripped) // 2):
            return ("prefix: the checkpoint's keys carry the extra prefix '{}.' ({} of {} keys match the model "
                    "without it); load with revise_keys=[(r'^{}\\.', '')] or re-save the inner "
                    "module".format(prefix, hits, len(stripped), re.escape(prefix)))
    missing = [k for k in entries if k not in checkpoint_shapes]
    model_prefix = _common_first_component(missing) if missing else None
    if model_prefix:
        hits = sum(1 for k in unmatched_ck if model_prefix + '.' + k in model_keys)
        if hits >= max(1, len(unmatched_ck) // 2):
            return ("prefix: the model's keys start with '{}.' but the checkpoint's do not ({} keys match with "
                    "it): a checkpoint of the inner module; load with revise_keys=[(r'^', '{}.')]".format(
                        model_prefix, hits, model_prefix))
    renamed = _renamed_modules(missing, unmatched_ck, entries, checkpoint_shapes)
    if renamed:
        return ('renamed module: {} (same sub-keys and shapes); the model was renamed since the checkpoint was '
                'saved, or the config builds a different variant: map the names with revise_keys'.format(
                    ', '.join("checkpoint '{}' = model '{}'".format(a, b) for a, b in renamed)))
    if loaded == 0:
        return ('nothing in common: no key of the checkpoint is a key of this model; a checkpoint of another '
                'model, or the wrong file')
    if report['shape_mismatches'] and len(report['shape_mismatches']) >= len(missing):
        return ('different architecture: {} entries have other shapes (e.g. a different num_classes or channel '
                'width than the config that trained it)'.format(len(report['shape_mismatches'])))
    return ('different architecture: the checkpoint lacks {} of the model\'s entries{}; was it trained with '
            'this config?'.format(len(missing), ' and has {} the model does not'.format(len(unmatched_ck))
                                   if unmatched_ck else ''))


def _renamed_modules(missing, unmatched_ck, entries, checkpoint_shapes):
    """[(checkpoint group, model group)] whose keys below the group name and shapes coincide."""
    def by_group(keys, shape_of):
        out = {}
        for k in keys:
            if '.' in k:
                g, rest = k.split('.', 1)
                out.setdefault(g, {})[rest] = tuple(shape_of(k))
        return out
    model_groups = by_group(missing, lambda k: entries[k][0])
    ck_groups = by_group(unmatched_ck, lambda k: checkpoint_shapes[k])
    pairs = []
    for cg, cset in ck_groups.items():
        for mg, mset in model_groups.items():
            if cg != mg and cset == mset:
                pairs.append((cg, mg))
                break
    return pairs


def _preview(items, limit=_PREVIEW):
    items = list(items)
    text = ', '.join(str(i) for i in items[:limit])
    return text + (', ... ({} in all)'.format(len(items)) if len(items) > limit else '')


def check_min_loaded(report, min_loaded, rank_tag=''):
    """Raise CheckpointLoadError when less than ``min_loaded`` of the parameter elements were loaded."""
    if not min_loaded or report['loaded_fraction'] >= min_loaded:
        return
    p = report['parameters']
    unmatched = [(name, g) for name, g in report['modules'].items()
                 if g['parameters']['loaded'] < g['parameters']['total'] or g['unexpected']]
    lines = ['{}only {}% of the model\'s {} parameter elements ({}/{} parameter tensors) were loaded from '
             '{}; runner.min_loaded={} ({}): the evaluation would score (mostly) untrained weights.'.format(
                 rank_tag + ' ' if rank_tag else '', percent(report['loaded_fraction']), p['total_elements'],
                 p['loaded'], p['total'], report['checkpoint'], min_loaded, settings.MIN_LOADED)]
    if unmatched:
        lines.append('Unmatched modules: ' + '; '.join(
            '{} ({}/{} tensors loaded{})'.format(n, g['parameters']['loaded'], g['parameters']['total'],
                                                  _problems(g).replace(': ', ', ', 1)) for n, g in unmatched))
    if report['missing']:
        lines.append('Missing from the checkpoint: ' + _preview(report['missing']))
    if report['shape_mismatches']:
        lines.append('Shape mismatches: ' + _preview('{} model {} vs checkpoint {}'.format(
            m['key'], tuple(m['model']), tuple(m['checkpoint'])) for m in report['shape_mismatches']))
    if report['unexpected']:
        lines.append('In the checkpoint but not in the model: ' + _preview(report['unexpected']))
    if report.get('cause'):
        lines.append('Likely cause: ' + report['cause'])
    lines.append('Fix the checkpoint/config pair, or set runner.min_loaded=0 (or {}=0) to evaluate '
                 'anyway.'.format(settings.MIN_LOADED))
    raise CheckpointLoadError('\n'.join(lines))

