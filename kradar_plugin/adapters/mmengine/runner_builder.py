"""``EvalOnlyRunner`` (mmengine ``RUNNERS``): mmengine's ``Runner`` plus ``EvalOnlyHook``, selectable with an
unmodified OpenMMLab 2.0 ``tools/train.py`` (mmdet3d 1.x, mmdet 3.x) from the command line:

    --cfg-options runner_type=EvalOnlyRunner [eval_mode=first] [eval_samples=200] [load_from=ckpt.pth]

(a hook cannot be given through ``--cfg-options``: ``custom_hooks=[dict(...)]`` does not parse; a string
``runner_type`` does). Config keys: ``eval_mode`` ('only' by default, 'first', 'off'), ``eval_samples``,
``base_runner_type`` (a project's own ``Runner`` subclass, which then gets the switch); a checkpoint
sweep's ``eval_checkpoints``, ``eval_watch``, ... (``kradar_plugin.distributed.sweep.plan``), which make the
mode eval-only, ``eval_resume``, ``eval_skip_bad``, ``eval_record_every`` (the evaluation inference),
``min_loaded`` (the sweep's checkpoint refusal threshold) and ``trust_checkpoint`` (full unpickling of
checkpoints). Their ``KRADAR_*`` variables override them (``kradar_plugin.runner_options``); when one is set
as ``kradar_plugin`` is imported (``custom_imports``), a config without ``runner_type`` obeys it too
(``install_env_switch``).

Every runner with the switch also runs distributed jobs on machines without CUDA (``cpu_dist``, the mirror
of ``adapters/mmcv1/cpu_dist.py``).
"""
import sys

from mmengine.registry import RUNNERS
from mmengine.runner import Runner

from kradar_plugin import runner_options
from kradar_plugin.distributed import run_context
from kradar_plugin.distributed.cpu_group import init_cpu_process_group
from kradar_plugin.distributed.sweep import plan as sweep_plan
from kradar_plugin.loading.safe_checkpoint import set_trusted
from .cpu_dist import cuda_available, dist_cfg_for_mmengine, wrap_model_cpu
from .eval_only_hook import EvalOnlyHook

__all__ = ['EvalSwitchMixin', 'EvalOnlyRunner', 'with_eval_switch', 'install_env_switch', 'cuda_available',
           'dist_cfg_for_mmengine', 'init_cpu_process_group', 'wrap_model_cpu']


class EvalSwitchMixin(object):
    """What ``EvalOnlyRunner`` adds to a ``Runner`` class (see the module docstring)."""

    default_mode = 'only'

    def __init__(self, *args, **kwargs):
        cfg = kwargs.get('cfg') or {}
        # resolved (and validated) before the runner builds anything
        options = runner_options.resolve(cfg, ('eval_mode', 'eval_samples') + runner_options.INFERENCE,
                                         defaults=dict(eval_mode=self.default_mode))
        self.eval_mode, self.eval_samples = options['eval_mode'], options['eval_samples']
        self.eval_sweep = sweep_plan.request_from(cfg)
        if self.eval_sweep.active:
            if self.eval_mode == 'first':
                raise ValueError('a checkpoint sweep is eval-only: it cannot run with eval_mode=first')
            self.eval_mode = 'only'
        run_context.start().inference = tuple(options[key] for key in runner_options.INFERENCE)
        if runner_options.resolve(cfg, ('trust_checkpoint',))['trust_checkpoint']:
            set_trusted('trust_checkpoint=True (or --trust-checkpoint)')
        self._kradar_notes = []
        super(EvalSwitchMixin, self).__init__(*args, **kwargs)
        for note in self._kradar_notes:
            self.logger.info(note)
        if self.eval_sweep.active and getattr(self, '_load_from', None):
            self.logger.info('kradar_plugin sweep: load_from=%s not loaded (each checkpoint of the sweep is '
                             'loaded in turn)', self._load_from)
            self._load_from = None
        if not any(isinstance(h, EvalOnlyHook) for h in self.hooks):
            self.register_hook(EvalOnlyHook(self.eval_mode, self.eval_samples, sweep=self.eval_sweep,
                                            min_loaded=cfg.get('min_loaded', None)), priority='LOWEST')
        if self.eval_mode != 'off' or self.eval_samples is not None:
            self.logger.info('kradar_plugin: eval_mode=%s, eval_samples=%s', self.eval_mode,
                             self.eval_samples if self.eval_samples is not None else 'all')

    def setup_env(self, env_cfg):
        env_cfg = dict(env_cfg or {})
        env_cfg['dist_cfg'] = dist_cfg_for_mmengine(env_cfg.get('dist_cfg') or {})
        if self.distributed and self.launcher == 'pytorch' and not cuda_available():
            import torch.distributed as dist
            if not dist.is_initialized():
                backend = init_cpu_process_group(env_cfg['dist_cfg'])
                self._kradar_notes.append('kradar_plugin: no CUDA: process group initialised with the {} '
                                          'backend (CPU)'.format(backend))
        return super(EvalSwitchMixin, self).setup_env(env_cfg)

    def wrap_model(self, model_wrapper_cfg, model):
        if not self.distributed or cuda_available():
            return super(EvalSwitchMixin, self).wrap_model(model_wrapper_cfg, model)
        return wrap_model_cpu(self, model_wrapper_cfg, model)


_SWITCH_CLASSES = {}


def with_eval_switch(runner_cls, default_mode='only'):
    """A subclass of ``runner_cls`` with ``EvalSwitchMixin`` (``runner_cls`` itself if it has it). Kept in
    this module under a stable name so that it pickles."""
    if issubclass(runner_cls, EvalSwitchMixin):
        return runner_cls
    key = (runner_cls, default_mode)
    if key not in _SWITCH_CLASSES:
        name = '{}With{}Switch'.format(runner_cls.__name__, 'EvalOnly' if default_mode == 'only' else 'Eval')
        new_cls = type(name, (EvalSwitchMixin, runner_cls), {
            '__module__': __name__, 'default_mode': default_mode,
            '__doc__': '{} with kradar_plugin\'s eval-only switch.'.format(runner_cls.__name__)})
        setattr(sys.modules[__name__], name, new_cls)
        _SWITCH_CLASSES[key] = new_cls
    return _SWITCH_CLASSES[key]


@RUNNERS.register_module()
class EvalOnlyRunner(EvalSwitchMixin, Runner):
    """mmengine's ``Runner`` with ``EvalOnlyHook``; ``eval_mode`` 'only' unless the config says otherwise."""

    @classmethod
    def from_cfg(cls, cfg):
        base = cfg.get('base_runner_type', None)
        if base and cls is EvalOnlyRunner:
            base_cls = RUNNERS.get(base) if isinstance(base, str) else base
            if base_cls is None:
                raise KeyError('base_runner_type={!r} is not registered in RUNNERS'.format(base))
            return with_eval_switch(base_cls, cls.default_mode).from_cfg(cfg)
        return super(EvalOnlyRunner, cls).from_cfg(cfg)


def install_env_switch(environ=None):
    """If ``KRADAR_EVAL_*`` asks for a switch, make ``Runner.from_cfg`` build runners with the switch
    (mode 'off' unless the variables or the config's ``eval_mode`` say otherwise). Returns True if it did."""
    if not runner_options.requested_switches(environ):
        return False
    original = Runner.__dict__['from_cfg'].__func__
    if getattr(original, '_kradar_env_switch', False):
        return True

    def from_cfg(cls, cfg):
        return original(with_eval_switch(cls, 'off'), cfg)

    from_cfg._kradar_env_switch = True
    from_cfg.__doc__ = original.__doc__
    Runner.from_cfg = classmethod(from_cfg)
    return True
