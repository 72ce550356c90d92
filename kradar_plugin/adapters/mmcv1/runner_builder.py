"""``EvalOnlyRunnerConstructor`` (mmcv ``RUNNER_BUILDERS``): builds the configured runner and registers
``EvalOnlyHook``, so that eval-only is one command-line option away with an unmodified train script:

    --cfg-options runner.constructor=EvalOnlyRunnerConstructor [runner.eval_mode=first] [runner.eval_samples=50]

Its own keys are removed from the runner config before the runner is built: ``eval_mode`` ('only' by
default, 'first', 'off'), ``eval_samples``, ``base_constructor`` (the constructor that builds the runner,
mmcv's default unless the config named another), ``min_loaded`` (least fraction of the model's parameter
elements a ``load_from``/``resume_from`` checkpoint must provide, default 0.9, 0 = no check),
``preflight`` ('auto': the distributed-pitfall checks before a pre-training evaluation; True/False) and
``probe_model`` (also one forward/backward to find parameters without gradient; default False),
``eval_resume`` (continue a partial inference record, default True) and ``eval_skip_bad`` (skip at most
that many failing samples, 'auto': 1%; default fail fast), ``eval_record_every`` (write the record at
least every N samples; default 256, or every 20 s), ``trust_checkpoint`` (load checkpoints with full
unpickling; default False).
Their ``KRADAR_*`` variables override them (``kradar_plugin.runner_options``, the table of these options).
The checkpoint sweep's keys (``eval_checkpoints``, ``eval_watch``, ``eval_watch_idle``, ``eval_watch_poll``,
``eval_final_epoch``, ``eval_key``, ``eval_stop_on_error``; see ``kradar_plugin.distributed.sweep.plan``) are
removed too; a sweep makes the mode eval-only.
"""
from mmcv.runner.builder import RUNNER_BUILDERS
from mmcv.runner.default_constructor import DefaultRunnerConstructor

from kradar_plugin import runner_options
from kradar_plugin.distributed import run_context
from kradar_plugin.distributed.sweep import plan as sweep_plan
from kradar_plugin.loading.safe_checkpoint import set_trusted
from .checkpoint_loading import install_checked_loading
from .eval_only_hook import EvalOnlyHook

# the options this constructor resolves itself (the sweep's make a SweepRequest)
RUN_KEYS = tuple(key for key in runner_options.KEYS if key not in runner_options.SWEEP)


@RUNNER_BUILDERS.register_module()
class EvalOnlyRunnerConstructor(object):
    """Runner constructor that adds ``EvalOnlyHook`` (priority LOWEST) to the runner it builds."""

    default_mode = 'only'

    def __init__(self, runner_cfg, default_args=None):
        if not isinstance(runner_cfg, dict):
            raise TypeError('runner_cfg should be a dict, got {}'.format(type(runner_cfg)))
        runner_cfg = dict(runner_cfg)
        self.base_constructor = runner_cfg.pop('base_constructor', 'DefaultRunnerConstructor')
        config = dict((key, runner_cfg.pop(key)) for key in runner_options.KEYS if key in runner_cfg)
        options = runner_options.resolve(config, RUN_KEYS, prefix='runner.',
                                         defaults=dict(eval_mode=self.default_mode))
        self.mode, self.eval_samples = options['eval_mode'], options['eval_samples']
        self.min_loaded = options['min_loaded']
        self.trust_checkpoint = options['trust_checkpoint']
        self.preflight, self.probe_model = options['preflight'], options['probe_model']
        self.inference = tuple(options[key] for key in runner_options.INFERENCE)
        self.sweep = sweep_plan.request_from(config, prefix='runner.')
        if self.sweep.active:
            if self.mode == 'first':
                raise ValueError('a checkpoint sweep is eval-only: it cannot run with eval_mode=first')
            self.mode = 'only'
        self.runner_cfg = runner_cfg
        self.default_args = default_args

    def _build_runner(self):
        if self.base_constructor in ('DefaultRunnerConstructor', DefaultRunnerConstructor):
            base = DefaultRunnerConstructor(self.runner_cfg, self.default_args)
        else:
            base = RUNNER_BUILDERS.build(dict(type=self.base_constructor, runner_cfg=self.runner_cfg,
                                              default_args=self.default_args))
        return base()

    def __call__(self):
        context = run_context.start()   # this run's shared state (checkpoint, loaders, saved results)
        context.inference = self.inference
        if self.trust_checkpoint:
            set_trusted('runner.trust_checkpoint=True (or --trust-checkpoint)')
        runner = self._build_runner()
        hook = EvalOnlyHook(self.mode, self.eval_samples, preflight=self.preflight, probe_model=self.probe_model,
                            sweep=self.sweep)
        install_checked_loading(runner, context, self.min_loaded,
                                skip=_load_before_sweep(runner, hook) if hook.sweep is not None else None)
        _record_data_loaders(runner, context)
        runner.register_hook(hook, priority='LOWEST')
        if self.mode != 'off' or self.eval_samples is not None:
            runner.logger.info('kradar_plugin: eval_mode=%s, eval_samples=%s%s', self.mode,
                               self.eval_samples if self.eval_samples is not None else 'all',
                               ', sweep: {}'.format(self.sweep.checkpoints or 'watch ' + self.sweep.watch)
                               if self.sweep.active else '')
        return runner


def _load_before_sweep(runner, hook):
    """``skip(filename)`` for the checked loading: a sweep loads each of its checkpoints in turn, so the
    config's ``load_from`` (a pretrained backbone, the last checkpoint), which the train function loads before
    the run starts, is left out with a log line."""
    def skip(filename):
        if hook.sweep_started:
            return False
        runner.logger.info('kradar_plugin sweep: load_from=%s not loaded (each checkpoint of the sweep is loaded '
                           'in turn)', filename)
        return True
    return skip


def _record_data_loaders(runner, context):
    """Keep the data loaders ``runner.run`` receives as ``context.data_loaders`` (the preflight checks
    the training loaders' samplers and workers before the first iteration)."""
    run = runner.run

    def run_recording(data_loaders, *args, **kwargs):
        context.data_loaders = data_loaders
        return run(data_loaders, *args, **kwargs)

    runner.run = run_recording


class EnvSwitchRunnerConstructor(EvalOnlyRunnerConstructor):
    """Stands in for mmcv's ``DefaultRunnerConstructor`` when a ``KRADAR_EVAL_*`` variable is set at
    import time: a config with only the ``custom_imports`` line then obeys the environment."""

    default_mode = 'off'


def install_env_switch(environ=None):
    """Register ``EnvSwitchRunnerConstructor`` under the default constructor's name if the environment
    asks for a switch. Returns True if it did."""
    if not runner_options.requested_switches(environ):
        return False
    RUNNER_BUILDERS.register_module(name='DefaultRunnerConstructor', force=True,
                                    module=EnvSwitchRunnerConstructor)
    return True
