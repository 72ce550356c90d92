"""Multi-process (gloo) runs on machines without CUDA, for mmcv-full 1.x / mmdet 2.x.

Out of the box these frameworks cannot run distributed on CPU:
- mmcv ``init_dist('pytorch')`` calls ``torch.cuda.set_device(rank % torch.cuda.device_count())``
  (ZeroDivisionError with no GPU);
- mmdet ``build_ddp`` asserts a cuda/mlu/npu device;
- mmcv ``MMDistributedDataParallel`` without ``device_ids`` passes ``DataContainer``s to the model
  unscattered;
- ``collect_results_cpu(..., tmpdir=None)`` broadcasts the temporary directory through a CUDA tensor
  (mmdet's ``collect_results_gpu`` is CUDA-only too);
- mmdet3d (0.17.x..1.0.0rcN) ``apis.train.train_detector``/``train_segmentor``, and mmdet < 2.21's
  ``train_detector`` (EchoFusion's mmdet 2.19, which mmdet3d 0.17.3 calls) call ``model.cuda()`` and
  ``torch.cuda.current_device()`` unconditionally.

The process-group init (mmcv's, first in that list) is ``dist_init``'s, which imports this module; the rest is
here: ``install_mmdet3d_cpu_support()`` when ``dist_init.install_cpu_support()`` runs (only when
``torch.cuda.is_available()`` is False, so a GPU run keeps the standard code path), and
``install_distributed_cpu_patches()`` when a distributed CPU run initialises.
"""
import contextlib
import functools
import os
import sys
import tempfile
import warnings

from .patching import loaded_modules, replace_everywhere

_INSTALLED = {'dist_cpu': False}


# --------------------------------------------------------------------------------------- DDP
_CPU_DDP = []


def cpu_ddp_class():
    """``MMDistributedDataParallel`` that scatters ``DataContainer``s to the CPU (device -1) itself."""
    if _CPU_DDP:
        return _CPU_DDP[0]
    from mmcv.parallel import MMDistributedDataParallel

    class CPUDistributedDataParallel(MMDistributedDataParallel):
        """DDP over gloo on CPU; unwraps DataContainers like MMDataParallel does on CPU."""

        def _unwrap(self, inputs, kwargs):
            inputs, kwargs = self.scatter(inputs, kwargs, [-1])
            return inputs[0], kwargs[0]

        def forward(self, *inputs, **kwargs):
            inputs, kwargs = self._unwrap(inputs, kwargs)
            return super(CPUDistributedDataParallel, self).forward(*inputs, **kwargs)

        def train_step(self, *inputs, **kwargs):
            inputs, kwargs = self._unwrap(inputs, kwargs)
            return super(CPUDistributedDataParallel, self).train_step(*inputs, **kwargs)

        def val_step(self, *inputs, **kwargs):
            inputs, kwargs = self._unwrap(inputs, kwargs)
            return super(CPUDistributedDataParallel, self).val_step(*inputs, **kwargs)

    _CPU_DDP.append(CPUDistributedDataParallel)
    return CPUDistributedDataParallel


def build_ddp_cpu(model, device='cpu', *args, **kwargs):
    """CPU ``build_ddp``: the model stays on the CPU, DDP without device ids."""
    kwargs.pop('device_ids', None)
    kwargs.pop('output_device', None)
    return cpu_ddp_class()(model.cpu(), *args, **kwargs)


# --------------------------------------------------------------------------------------- collection
def _shared_tmpdir():
    """A temporary directory created on rank 0 and broadcast to every rank through gloo."""
    import torch.distributed as dist
    holder = [None]
    if dist.get_rank() == 0:
        os.makedirs('.dist_test', exist_ok=True)
        holder[0] = tempfile.mkdtemp(dir='.dist_test')
    dist.broadcast_object_list(holder, src=0)
    return holder[0]


def _wrap_collect_cpu(original):
    @functools.wraps(original)
    def collect_results_cpu(result_part, size, tmpdir=None):
        if tmpdir is not None:
            return original(result_part, size, tmpdir)
        results = original(result_part, size, _shared_tmpdir())
        if results is not None:  # rank 0 removed its part directory; drop the parent if now empty
            try:
                os.rmdir('.dist_test')
            except OSError:
                pass
        return results
    return collect_results_cpu


def _wrap_collect_gpu(module):
    def make(original):
        @functools.wraps(original)
        def collect_results_gpu(result_part, size):
            _warn_once('gpu_collect=True has no GPU to use; collecting results through a shared '
                       'temporary directory instead')
            return module.collect_results_cpu(result_part, size, None)
        return collect_results_gpu
    return make


_WARNED = set()


def _warn_once(message):
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn('kradar_plugin: ' + message)


# --------------------------------------------------------------------------------------- mmdet3d apis
class _CudaWithoutDevice(object):
    """``torch.cuda`` as seen by mmdet3d's train functions on a CPU machine: ``current_device()`` gives 0
    (only used for DDP ``device_ids``, which the CPU DDP ignores); everything else is torch.cuda."""

    @staticmethod
    def current_device():
        return 0

    def __getattr__(self, name):
        import torch
        return getattr(torch.cuda, name)


class _TorchWithoutDevice(object):
    """``torch`` with :class:`_CudaWithoutDevice` as ``cuda``; everything else is torch."""
    cuda = _CudaWithoutDevice()

    def __getattr__(self, name):
        import torch
        return getattr(torch, name)


def _ddp_without_device_ids(module, *args, **kwargs):
    kwargs.pop('device_ids', None)
    kwargs.pop('output_device', None)
    return cpu_ddp_class()(module.cpu(), *args, **kwargs)


@contextlib.contextmanager
def _cpu_view(module, model):
    """While a train function of ``module`` runs: ``model.cuda(...)`` returns the model (on this instance only),
    and the train module sees a CPU DDP and a ``torch.cuda.current_device()`` that does not need a GPU."""
    names = ('torch', 'MMDistributedDataParallel')
    saved = {name: module.__dict__[name] for name in names if name in module.__dict__}
    module.torch = _TorchWithoutDevice()
    module.MMDistributedDataParallel = _ddp_without_device_ids
    model.cuda = lambda *args, **kwargs: model
    try:
        yield
    finally:
        del model.cuda
        for name in names:
            if name in saved:
                setattr(module, name, saved[name])
            else:
                delattr(module, name)


# (module, train functions it defines or imports): the train functions that put the model on the GPU
# themselves (``model.cuda()``, ``MMDistributedDataParallel(..., device_ids=[torch.cuda.current_device()])``):
# mmdet3d 0.17.x..1.0.0rcN's own, and mmdet < 2.21's / mmseg's (EchoFusion's mmdet 2.19 and mmseg 0.20, which
# mmdet3d 0.17.3's ``train_model`` calls). mmdet >= 2.21 builds its wrappers through ``build_dp``/``build_ddp``
# (patched at distributed init instead).
TRAIN_FUNCTIONS = (
    ('mmdet3d.apis.train', ('train_detector', 'train_segmentor')),
    ('mmdet.apis.train', ('train_detector',)),
    ('mmseg.apis.train', ('train_segmentor',)),
)


def _puts_model_on_gpu(function):
    """True for a train function whose own module wraps the model without ``build_dp``/``build_ddp``."""
    module = sys.modules.get(getattr(function, '__module__', None) or '')
    return module is not None and not hasattr(module, 'build_ddp')


def install_mmdet3d_cpu_support():
    """Make the train functions of :data:`TRAIN_FUNCTIONS` that are already imported (scripts import them
    before the config's ``custom_imports``) run on a machine without CUDA: while one runs, its own module
    sees a CPU DDP and a ``torch.cuda.current_device()`` that needs no GPU, and ``model.cuda()`` returns the
    model. Returns True if any train module is loaded. GPU machines never get here."""
    loaded = False
    for module_name, names in TRAIN_FUNCTIONS:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        loaded = True
        for name in names:
            function = getattr(module, name, None)
            if function is None or getattr(function, '_kradar_patched', False) or not _puts_model_on_gpu(function):
                continue
            replace_everywhere(module_name, name, _train_on_cpu)
    return loaded


def _train_on_cpu(original):
    home = sys.modules[original.__module__]

    @functools.wraps(original)
    def train_on_cpu(model, *args, **kwargs):
        with _cpu_view(home, model):
            return original(model, *args, **kwargs)
    return train_on_cpu


# --------------------------------------------------------------------------------------- the distributed run
def _seed_on_cpu(original):
    """mmdet's ``init_random_seed(seed=None, device='cuda')`` broadcasts the seed in a tensor on ``device``;
    mmdet <= 2.24's train.py (EchoFusion's mmdet 2.19) passes no device: on the CPU the tensor stays there."""
    @functools.wraps(original)
    def init_random_seed(seed=None, device='cuda'):
        return original(seed, 'cpu' if str(device).startswith('cuda') else device)
    return init_random_seed


def install_distributed_cpu_patches():
    """mmdet ``build_ddp`` -> CPU DDP; ``init_random_seed`` -> seed broadcast on the CPU;
    ``collect_results_cpu`` without tmpdir and ``collect_results_gpu`` -> a gloo-broadcast temporary
    directory. Every loaded module that bound these names (mmdet's own
    modules, a train/test script's ``__main__``) gets the replacement; the frameworks look the names up at
    call time, so code that imported them before the distributed run started is covered."""
    if _INSTALLED['dist_cpu']:
        return

    def make_build_ddp(original):
        @functools.wraps(original)
        def build_ddp(model, device='cuda', *args, **kwargs):
            if device in ('cpu', 'cuda'):
                return build_ddp_cpu(model, 'cpu', *args, **kwargs)
            return original(model, device, *args, **kwargs)
        return build_ddp

    replace_everywhere('mmdet.utils.util_distribution', 'build_ddp', make_build_ddp)
    for name in ('mmdet.apis.train', 'mmdet3d.apis.train'):
        replace_everywhere(name, 'init_random_seed', _seed_on_cpu)
    install_mmdet3d_cpu_support()
    for name in ('mmcv.engine.test', 'mmdet.apis.test'):
        replace_everywhere(name, 'collect_results_cpu', _wrap_collect_cpu)
    for name in ('mmcv.engine.test', 'mmdet.apis.test'):
        for mod in loaded_modules([name]):
            replace_everywhere(name, 'collect_results_gpu', _wrap_collect_gpu(mod))
    _INSTALLED['dist_cpu'] = True
