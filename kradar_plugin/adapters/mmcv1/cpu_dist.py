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

``install_cpu_support()`` replaces exactly these entry points, and only when ``torch.cuda.is_available()``
is False, so a GPU run keeps the standard code path (mmcv's init at import; the others when a distributed
CPU run initialises). ``install_timeout_support()`` (always) converts a numeric ``dist_params.timeout``
(seconds) into the ``timedelta`` torch requires, and lets the Slurm launcher take it (``slurm_dist``); it
touches nothing else.
"""
import contextlib
import functools
import importlib
import os
import sys
import tempfile
import warnings

_INSTALLED = {'cpu': False, 'timeout': False}


def _modules(names):
    """The named modules that import (already imported or importable now). A framework that fails to
    import is left alone: the script that needs it reports that failure itself."""
    found = []
    for name in names:
        try:
            found.append(importlib.import_module(name))
        except Exception:
            continue
    return found


def _replace(modules, attr, make_replacement):
    """Replace ``attr`` in every module that has it by ``make_replacement(original)`` (once per original)."""
    done = {}
    for mod in modules:
        original = getattr(mod, attr, None)
        if original is None or getattr(original, '_kradar_patched', False):
            continue
        key = id(original)
        if key not in done:
            new = make_replacement(original)
            new._kradar_patched = True
            new.__wrapped__ = original
            done[key] = new
        setattr(mod, attr, done[key])


# --------------------------------------------------------------------------------------- timeout
def install_timeout_support():
    """Let ``dist_params=dict(timeout=<seconds>)`` reach init_process_group as a timedelta."""
    if _INSTALLED['timeout']:
        return
    from kradar_plugin.distributed.dist_params import normalize_dist_params
    mods = _modules(['mmcv.runner.dist_utils'])

    def wrap(original):
        @functools.wraps(original)
        def init_with_timeout(*args, **kwargs):
            return original(*args, **normalize_dist_params(kwargs))
        return init_with_timeout

    _replace(mods, '_init_dist_pytorch', wrap)
    _replace(mods, '_init_dist_mpi', wrap)
    from .slurm_dist import wrap as wrap_slurm  # mmcv's takes no timeout and needs CUDA
    _replace(mods, '_init_dist_slurm', wrap_slurm)
    _INSTALLED['timeout'] = True


# --------------------------------------------------------------------------------------- init_dist
def _init_dist_pytorch_cpu(backend='gloo', **kwargs):
    """CPU replacement for mmcv's ``_init_dist_pytorch``: no ``torch.cuda.set_device``; gloo backend.
    Also installs the mmdet/mmcv replacements a distributed CPU run needs next (DDP, result collection)."""
    import torch.distributed as dist
    from kradar_plugin.distributed import group_teardown
    from kradar_plugin.distributed.dist_params import normalize_dist_params
    if backend != 'gloo':
        warnings.warn('kradar_plugin: no CUDA device, using the gloo backend instead of {!r} for this '
                      'CPU run'.format(backend))
        backend = 'gloo'
    dist.init_process_group(backend=backend, **normalize_dist_params(kwargs))
    group_teardown.destroy_at_exit()
    install_distributed_cpu_patches()


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
            _replace_everywhere(module_name, name, _train_on_cpu)
    return loaded


def _train_on_cpu(original):
    home = sys.modules[original.__module__]

    @functools.wraps(original)
    def train_on_cpu(model, *args, **kwargs):
        with _cpu_view(home, model):
            return original(model, *args, **kwargs)
    return train_on_cpu


# --------------------------------------------------------------------------------------- install
def install_cpu_support(force=False):
    """On a machine without CUDA (or with ``force``), replace mmcv's ``_init_dist_pytorch`` by the CPU one.

    Cheap at import time: the DDP and result-collection replacements (which import mmdet.apis) are
    installed when a distributed CPU run actually initialises (``_init_dist_pytorch_cpu``), or by calling
    ``install_distributed_cpu_patches()``. Returns True if installed."""
    import torch
    if _INSTALLED['cpu']:
        install_mmdet3d_cpu_support()  # mmdet3d's apis may have been imported since
        return True
    if torch.cuda.is_available() and not force:
        return False
    install_timeout_support()
    for mod in _modules(['mmcv.runner.dist_utils']):
        if not getattr(mod._init_dist_pytorch, '_kradar_cpu', False):
            _init_dist_pytorch_cpu._kradar_cpu = True
            mod._init_dist_pytorch = _init_dist_pytorch_cpu
    install_mmdet3d_cpu_support()
    _INSTALLED['cpu'] = True
    return True


def _replace_everywhere(module_name, attr, make_replacement):
    """Replace the function ``module_name.attr`` in every loaded module that bound it under that name
    (``from mmdet.utils import build_ddp`` in a script's ``__main__`` included)."""
    mods = _modules([module_name])
    if not mods:
        return
    original = getattr(mods[0], attr, None)
    if original is None or getattr(original, '_kradar_patched', False):
        return
    new = make_replacement(original)
    new._kradar_patched = True
    new.__wrapped__ = original
    for mod in list(sys.modules.values()):
        try:
            if getattr(mod, attr, None) is original:
                setattr(mod, attr, new)
        except Exception:  # exotic module objects
            continue


def _seed_on_cpu(original):
    """mmdet's ``init_random_seed(seed=None, device='cuda')`` broadcasts the seed in a tensor on ``device``;
    mmdet <= 2.24's train.py (EchoFusion's mmdet 2.19) passes no device: on the CPU the tensor stays there."""
    @functools.wraps(original)
    def init_random_seed(seed=None, device='cuda'):
        return original(seed, 'cpu' if str(device).startswith('cuda') else device)
    return init_random_seed


def install_distributed_cpu_patches():
    """mmdet ``build_ddp`` -> CPU DDP; ``init_random_seed`` -> seed broadcast on the CPU; ``collect_results_cpu`` without tmpdir and ``collect_results_gpu``
    -> a gloo-broadcast temporary directory. Every loaded module that bound these names (mmdet's own
    modules, a train/test script's ``__main__``) gets the replacement; the frameworks look the names up at
    call time, so code that imported them before the distributed run started is covered."""
    if _INSTALLED.get('dist_cpu'):
        return

    def make_build_ddp(original):
        @functools.wraps(original)
        def build_ddp(model, device='cuda', *args, **kwargs):
            if device in ('cpu', 'cuda'):
                return build_ddp_cpu(model, 'cpu', *args, **kwargs)
            return original(model, device, *args, **kwargs)
        return build_ddp

    _replace_everywhere('mmdet.utils.util_distribution', 'build_ddp', make_build_ddp)
    for name in ('mmdet.apis.train', 'mmdet3d.apis.train'):
        _replace_everywhere(name, 'init_random_seed', _seed_on_cpu)
    install_mmdet3d_cpu_support()
    for name in ('mmcv.engine.test', 'mmdet.apis.test'):
        _replace_everywhere(name, 'collect_results_cpu', _wrap_collect_cpu)
    for name in ('mmcv.engine.test', 'mmdet.apis.test'):
        for mod in _modules([name]):
            _replace_everywhere(name, 'collect_results_gpu', _wrap_collect_gpu(mod))
    _INSTALLED['dist_cpu'] = True
