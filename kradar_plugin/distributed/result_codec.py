"""One sample's predictions to and from the partial record's plain form: torch tensors and mmdet3d box
objects become tagged numpy dicts (``inference_record.TYPE_KEY``) and come back as the same types with the
same values (bit for bit), so that resumed and freshly computed predictions are indistinguishable.

Duck-typed (a tensor has ``detach``/``numpy``, a box object a ``tensor``, ``box_dim`` and ``with_yaw``); on
decoding, a box class is imported only from an ``mmdet3d.`` module and must have those attributes. torch
is imported inside :func:`decode_leaf`.
"""
import importlib

import numpy as np

from .inference_record import TYPE_KEY, decode, encode


def _is_tensor(obj):
    return hasattr(obj, 'detach') and hasattr(obj, 'cpu') and hasattr(obj, 'numpy')


def encode_leaf(obj):
    if isinstance(obj, np.ndarray) or obj is None or isinstance(obj, (str, bytes, int, float, bool)):
        return obj
    tensor = getattr(obj, 'tensor', None)
    if tensor is not None and _is_tensor(tensor) and hasattr(obj, 'box_dim'):
        cls = type(obj)
        return {TYPE_KEY: 'boxes', 'class': '{}:{}'.format(cls.__module__, cls.__name__),
                'tensor': tensor.detach().cpu().numpy(), 'box_dim': int(obj.box_dim),
                'with_yaw': bool(getattr(obj, 'with_yaw', True))}
    if _is_tensor(obj):
        return {TYPE_KEY: 'tensor', 'array': obj.detach().cpu().numpy()}
    return obj


def _box_class(name):
    module, _, cls_name = str(name).partition(':')
    if not (module == 'mmdet3d' or module.startswith('mmdet3d.')) or not cls_name.isidentifier():
        raise ValueError('refusing to rebuild box class {!r} from a record'.format(name))
    cls = getattr(importlib.import_module(module), cls_name)
    if not isinstance(cls, type) or not (hasattr(cls, 'convert_to') and hasattr(cls, 'limit_yaw')):
        raise ValueError('{!r} is not a box class'.format(name))
    return cls


def decode_leaf(obj):
    import torch
    kind = obj.get(TYPE_KEY)
    if kind == 'tensor':
        return torch.from_numpy(np.array(obj['array']))
    if kind == 'boxes':
        return _box_class(obj['class'])(torch.from_numpy(np.array(obj['tensor'])), box_dim=obj['box_dim'],
                                        with_yaw=obj['with_yaw'])
    raise ValueError('unknown record entry {!r}'.format(kind))


def encode_result(result):
    return encode(result, encode_leaf)


def decode_result(result):
    return decode(result, decode_leaf)


def weights_digest(model):
    """A digest of the evaluated parameters and buffers (the checkpoint content the record belongs to)."""
    import hashlib
    module = getattr(model, 'module', model)
    digest = hashlib.sha256()
    for name, value in module.state_dict().items():
        digest.update(name.encode('utf-8'))
        tensor = value.detach().cpu()
        try:
            digest.update(tensor.contiguous().numpy().tobytes())
        except (TypeError, RuntimeError):   # dtypes numpy lacks (bfloat16)
            digest.update(tensor.float().contiguous().numpy().tobytes())
    return digest.hexdigest()[:24]
