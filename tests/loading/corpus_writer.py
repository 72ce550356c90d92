"""Writes a corpus of real checkpoints with the stack it runs on, and a manifest of what torch.load reads back.

    <venv>/bin/python tests/loading/corpus_writer.py OUT_DIR

Run by tests/loading/test_checkpoint_corpus.py under every environment that is built (the 1.x stack, EchoFusion's
torch 1.10, the 2.0 stack, today's torch): each writes

- ``plain_zip.pth`` / ``plain_legacy.pth``: ``torch.save`` of every dtype the loader knows, views (slices,
  transposes, stride 0), two tensors over one storage, parameters, ``requires_grad``, empty and 0-d tensors, a
  state dict with its ``_metadata``, numpy arrays/scalars, ``torch.Size``/``device``/dtypes, in both formats;
- ``mmcv1_epoch_1.pth``: mmcv 1.x's ``EpochBasedRunner.save_checkpoint`` after one SGD step (optimizer state,
  meta with a numpy array as mmdet's hooks write, and a ``ConfigDict``), where mmcv 1.x is installed;
- ``mmengine_epoch_1.pth``: an mmengine ``Runner``'s checkpoint after one epoch with ``EMAHook`` (message hub
  with HistoryBuffers, scheduler and EMA states, the dataset's ConfigDict metainfo in meta), where mmengine is
  installed;

and ``manifest.json``: for each file, every tensor and array leaf (path -> dtype, shape, sum, Parameter?) as
this stack's own ``torch.load`` reads it. Python 3.7 and torch 1.10 compatible.
"""
import collections
import json
import os
import sys


def leaves(obj, path='', out=None):
    """{path: [kind, dtype, shape, sum, extra]} of the tensors and numpy arrays in ``obj``; plain scalars and
    strings as [kind, repr]. The same walk reads the writer's torch.load and the loader's result."""
    import numpy as np
    out = {} if out is None else out
    kind = type(obj).__name__
    if hasattr(obj, 'shape') and hasattr(obj, 'dtype') and not isinstance(obj, np.generic):
        if hasattr(obj, 'detach'):
            values = obj.detach().cpu()
            values = (values.abs() if values.is_complex() else values).double()
        else:
            values = np.asarray(obj, dtype=np.float64)
        count = values.numel() if hasattr(values, 'numel') else values.size
        total = float(values.sum()) if count else 0.0
        extra = [bool(getattr(obj, 'requires_grad', False)), list(obj.stride()) if hasattr(obj, 'stride') else None]
        out[path] = [kind, str(obj.dtype).replace('torch.', ''), list(obj.shape), round(total, 6), extra]
    elif isinstance(obj, dict):
        for key in obj:
            leaves(obj[key], '{}[{!r}]'.format(path, key), out)
        if getattr(obj, '_metadata', None) is not None:
            out[path + '._metadata'] = ['metadata', repr(sorted(obj._metadata.items()))]
    elif isinstance(obj, (list, tuple)) and type(obj).__name__ != 'Size':
        for i, value in enumerate(obj):
            leaves(value, '{}[{}]'.format(path, i), out)
    elif hasattr(obj, '__dict__') and not callable(obj):
        for key in sorted(vars(obj)):
            if key != 'statistics_methods':
                leaves(vars(obj)[key], '{}.{}'.format(path, key), out)
    elif not callable(obj):
        value = obj.item() if isinstance(obj, np.generic) else obj
        out[path] = [kind if not isinstance(obj, np.generic) else 'numpy.' + kind, repr(value)]
    return out


def plain_checkpoint():
    import numpy as np
    import torch
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    bn = torch.nn.BatchNorm1d(2)
    model = torch.nn.Sequential(lin, bn)
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    shared = torch.arange(10, dtype=torch.int64)
    tensors = collections.OrderedDict()
    for name in ('float64', 'float32', 'float16', 'bfloat16', 'int64', 'int32', 'int16', 'int8', 'uint8', 'bool',
                 'complex64', 'complex128'):
        dtype = getattr(torch, name)
        tensors[name] = (torch.arange(7) % 2 == 0) if name == 'bool' else torch.arange(7).to(dtype)
    return {
        'state_dict': model.state_dict(),
        'dtypes': tensors,
        'views': {'slice': base[1:3, 2:5], 'transposed': base.t(), 'expanded': torch.ones(3).expand(4, 3),
                  'offset': shared[3:], 'whole': shared, 'scalar': torch.tensor(3.5), 'empty': torch.zeros(0, 4)},
        'parameters': {'frozen': torch.nn.Parameter(torch.ones(2, 2), requires_grad=False),
                       'trained': torch.nn.Parameter(torch.full((3,), 0.5))},
        'grad_tensor': torch.ones(2, requires_grad=True),
        'meta': {'epoch': 3, 'CLASSES': ('Sedan', 'Bus or Truck'), 'array_f32': np.arange(5, dtype=np.float32),
                 'array_i32': np.arange(4, dtype=np.int32).reshape(2, 2), 'best': np.float64(0.75),
                 'count': np.int64(12), 'size': torch.Size([2, 3]), 'device': torch.device('cpu'),
                 'dtype': torch.float16, 'names': ['a', 'b'], 'nothing': None, 'text': 'x' * 40},
    }


def mmcv1_checkpoint(folder):
    """mmcv 1.x's runner saves after one SGD step (None where mmcv 1.x is not installed)."""
    try:
        import mmcv
        if not mmcv.__version__.startswith('1.'):
            return None
        from mmcv.runner import EpochBasedRunner
    except ImportError:
        return None
    import logging
    import numpy as np
    import torch

    class Toy(torch.nn.Module):
        def __init__(self):
            super(Toy, self).__init__()
            self.linear = torch.nn.Linear(4, 2)
            self.bn = torch.nn.BatchNorm1d(2)

        def train_step(self, data, optimizer):
            loss = self.bn(self.linear(data)).pow(2).mean()
            return dict(loss=loss, log_vars=dict(loss=float(loss)), num_samples=len(data))

    torch.manual_seed(1)
    model = Toy()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    runner = EpochBasedRunner(model, optimizer=optimizer, work_dir=folder, logger=logging.getLogger('corpus'),
                              max_epochs=1)
    loss = model.train_step(torch.randn(8, 4), optimizer)['loss']
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    runner._epoch = 0                  # saved as epoch + 1
    runner.save_checkpoint(folder, filename_tmpl='mmcv1_epoch_{}.pth', create_symlink=False,
                           meta=dict(mmdet3d_version='0.17.3', CLASSES=('Sedan',), anchors=np.ones((2, 3)),
                                     hook_msgs=dict(best_score=np.float64(0.5)),
                                     eval_cfg=mmcv.ConfigDict(interval=1, metric=['bbox'], nested=dict(a=1))))
    return os.path.join(folder, 'mmcv1_epoch_1.pth')


def mmengine_toy_runner(work_dir, metainfo, max_epochs, **kwargs):
    """An mmengine Runner of a toy model (Linear + BatchNorm) on 8 samples whose dataset has ``metainfo``:
    SGD with momentum, MultiStepLR, EMAHook, a checkpoint each epoch."""
    import torch
    from mmengine.model import BaseModel
    from mmengine.runner import Runner
    from torch.utils.data import Dataset

    class Toy(BaseModel):
        def __init__(self):
            super(Toy, self).__init__()
            self.linear = torch.nn.Linear(4, 2)
            self.bn = torch.nn.BatchNorm1d(2)

        def forward(self, inputs, labels=None, mode='loss'):
            out = self.bn(self.linear(torch.stack(inputs) if isinstance(inputs, list) else inputs))
            return dict(loss=out.pow(2).mean()) if mode == 'loss' else [out]

    class Data(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            return dict(inputs=torch.full((4,), float(index)), labels=0)

    Data.metainfo = metainfo
    return Runner(model=Toy(), work_dir=str(work_dir), default_scope='mmengine',
                  train_dataloader=dict(dataset=Data(), sampler=dict(type='DefaultSampler', shuffle=False),
                                        batch_size=4, collate_fn=dict(type='default_collate')),
                  optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9)),
                  param_scheduler=dict(type='MultiStepLR', milestones=[1]),
                  train_cfg=dict(by_epoch=True, max_epochs=max_epochs),
                  default_hooks=dict(checkpoint=dict(type='CheckpointHook', interval=1)),
                  custom_hooks=[dict(type='EMAHook')], visualizer=dict(type='Visualizer', vis_backends=[]),
                  **kwargs)


def mmengine_checkpoint(folder):
    """An mmengine Runner's checkpoint after one epoch with EMAHook (None without mmengine)."""
    try:
        from mmengine.config import ConfigDict
    except ImportError:
        return None
    work = os.path.join(folder, 'mmengine_work')
    # a dataset's metainfo from a config is a ConfigDict: meta['dataset_meta']
    runner = mmengine_toy_runner(work, ConfigDict(classes=('Sedan', 'Bus or Truck'),
                                                  palette=dict(Sedan=[0, 0, 255])), max_epochs=1)
    runner.train()
    path = os.path.join(folder, 'mmengine_epoch_1.pth')
    os.replace(os.path.join(work, 'epoch_1.pth'), path)
    return path


def main(folder):
    import torch
    os.makedirs(folder, exist_ok=True)
    written = {}
    checkpoint = plain_checkpoint()
    for name, zipped in (('plain_zip.pth', True), ('plain_legacy.pth', False)):
        path = os.path.join(folder, name)
        torch.save(checkpoint, path, _use_new_zipfile_serialization=zipped)
        written[name] = path
    for name, write in (('mmcv1_epoch_1.pth', mmcv1_checkpoint), ('mmengine_epoch_1.pth', mmengine_checkpoint)):
        path = write(folder)
        if path:
            written[name] = path
    manifest = {'torch': torch.__version__, 'python': '{}.{}'.format(*sys.version_info[:2]), 'files': {}}
    for name, path in sorted(written.items()):
        try:
            loaded = torch.load(path, map_location='cpu', weights_only=False)
        except TypeError:                  # torch < 1.13: no weights_only
            loaded = torch.load(path, map_location='cpu')
        manifest['files'][name] = leaves(loaded)
    with open(os.path.join(folder, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1, sort_keys=True)


if __name__ == '__main__':
    main(sys.argv[1])
