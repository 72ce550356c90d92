"""Facts from an mmcv 1.x config file: DataLoader workers, GPUs, distributed timeout, evaluation.

mmcv's ``Config.fromfile`` is used when mmcv is already imported; otherwise the file is executed as plain
Python with its ``_base_`` files merged (``_delete_=True`` honoured, ``{{fileDirname}}``-style variables
substituted) so the doctor works without mmcv and without importing torch.
"""
import datetime
import io
import os
import sys


def _substitute(text, path):
    dirname = os.path.dirname(os.path.abspath(path))
    basename = os.path.basename(path)
    for key, value in (('fileDirname', dirname), ('fileBasename', basename),
                       ('fileBasenameNoExtension', os.path.splitext(basename)[0]),
                       ('fileExtname', os.path.splitext(basename)[1])):
        text = text.replace('{{ %s }}' % key, value).replace('{{%s}}' % key, value)
    return text


def _merge(base, new):
    out = dict(base)
    for key, value in new.items():
        if isinstance(value, dict) and not value.get('_delete_', False) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            if isinstance(value, dict):
                value = dict((k, v) for k, v in value.items() if k != '_delete_')
            out[key] = value
    return out


def load_plain(path, _depth=0):
    """The config as a dict by executing the file (and its _base_ files) as plain Python."""
    if _depth > 20:
        raise ValueError('config %s: _base_ nesting deeper than 20 (a cycle?)' % path)
    with io.open(path, encoding='utf-8') as f:
        text = _substitute(f.read(), path)
    namespace = {'__file__': os.path.abspath(path), '__name__': '__kradar_doctor_config__'}
    exec(compile(text, path, 'exec'), namespace)
    own = dict((k, v) for k, v in namespace.items()
               if not k.startswith('__') and not isinstance(v, type(os)) and not callable(v))
    bases = own.pop('_base_', [])
    bases = [bases] if isinstance(bases, str) else list(bases)
    merged = {}
    for base in bases:
        merged = _merge(merged, load_plain(os.path.join(os.path.dirname(os.path.abspath(path)), base),
                                           _depth + 1))
    return _merge(merged, own)


def load_config(path):
    """The config as a plain dict (mmcv.Config when mmcv is already imported)."""
    if not os.path.isfile(path):
        raise ValueError('--config: no such file %r' % (path,))
    mmcv = sys.modules.get('mmcv')
    if mmcv is not None and hasattr(mmcv, 'Config'):
        try:
            return mmcv.Config.fromfile(path)._cfg_dict.to_dict()
        except Exception as exc:  # noqa: BLE001 - the run would stop here too: say so, do not crash
            hint = ''
            if 'pickle module' in str(exc):  # "can't pickle module objects" (py3.7) / "cannot pickle 'module'"
                hint = ('; this mmcv keeps the modules a config imports (e.g. `import datetime`) in the config '
                        'and cannot copy them when the config has _base_ files: drop the import (a '
                        'dist_params timeout can be given in seconds with kradar_plugin)')
            raise ValueError('--config: mmcv {} cannot load {} ({}: {}){}'.format(
                getattr(mmcv, '__version__', '?'), path, type(exc).__name__, exc, hint))
    return load_plain(path)


def _seconds(timeout):
    if isinstance(timeout, datetime.timedelta):
        return timeout.total_seconds()
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
        return float(timeout)
    return None


def pipeline_types(cfg):
    """Sorted ``type`` names of every transform in the config's pipelines: dicts under a key whose name ends
    in 'pipeline' (``train_pipeline``, ``data.train.pipeline``, ``dataset.pipeline``, ...), nested ones too."""
    found = set()

    def walk(node, in_pipeline):
        if isinstance(node, dict):
            if in_pipeline and isinstance(node.get('type'), str):
                found.add(node['type'])
            for key, value in node.items():
                walk(value, in_pipeline or str(key).endswith('pipeline'))
        elif isinstance(node, (list, tuple)):
            for value in node:
                walk(value, in_pipeline)

    walk(cfg, False)
    return sorted(found)


def config_facts(path):
    """{'workers-per-gpu', 'samples-per-gpu', 'gpus', 'dist-timeout', 'evaluation', 'pipeline', 'config'} of a
    config.

    Keys are absent when the config does not say (the live environment or defaults decide then)."""
    cfg = load_config(path)
    facts = {'config': path}
    data = cfg.get('data') or {}
    for key in ('workers_per_gpu', 'samples_per_gpu'):
        if isinstance(data.get(key), int):
            facts[key.replace('_', '-')] = data[key]
    loader = cfg.get('train_dataloader') or {}
    if 'workers-per-gpu' not in facts and isinstance(loader.get('num_workers'), int):
        facts['workers-per-gpu'] = loader['num_workers']  # mmengine-style config
    if isinstance(cfg.get('gpus'), int):
        facts['gpus'] = cfg['gpus']
    elif isinstance(cfg.get('gpu_ids'), (list, tuple)):
        facts['gpus'] = len(cfg['gpu_ids'])
    dist = cfg.get('dist_params') or (cfg.get('env_cfg') or {}).get('dist_cfg') or {}
    if isinstance(dist.get('backend'), str):
        facts['dist-backend'] = dist['backend']
    if 'timeout' in dist:
        facts['dist-timeout'] = _seconds(dist['timeout'])
        if facts['dist-timeout'] is None:
            facts['dist-timeout-invalid'] = repr(dist['timeout'])
    evaluation = cfg.get('evaluation')
    facts['evaluation'] = bool(evaluation) or bool(cfg.get('val_evaluator'))
    types = pipeline_types(cfg)
    if types:
        facts['pipeline'] = types
    if 'find_unused_parameters' in cfg:
        facts['find-unused-parameters'] = bool(cfg['find_unused_parameters'])
    elif cfg.get('model_wrapper_cfg') and 'find_unused_parameters' in cfg['model_wrapper_cfg']:
        facts['find-unused-parameters'] = bool(cfg['model_wrapper_cfg']['find_unused_parameters'])
    elif cfg.get('runner') or cfg.get('evaluation') or cfg.get('data'):
        facts['find-unused-parameters'] = False  # mmdet/mmdet3d's train_detector default
    strategy = cfg.get('sharing_strategy') or (cfg.get('env_cfg') or {}).get('sharing_strategy')
    if strategy:
        facts['sharing-strategy'] = strategy
    return facts
