"""mmcv 1.x runner adapters: eval-only / eval-first / eval-samples launches, evaluation guards (exact
collection, saved predictions, fail-fast), and the launch support for CPU (gloo) multi-process runs.

Imported by ``kradar_plugin`` when mmcv is importable. Importing it where mmcv is installed and is 1.x (or is
broken and mmengine is absent, so the failure is reported):
- registers ``EvalOnlyHook`` (mmcv HOOKS) and ``EvalOnlyRunnerConstructor`` (mmcv RUNNER_BUILDERS);
- makes ``dist_params=dict(timeout=<seconds>)`` work (converted to a timedelta);
- lets mmcv <= 1.7's ``Config.pretty_text`` run with yapf >= 0.40.2 (``compat.yapf_format``, one warning);
- fixes mmcv < 1.4.2's CPU scatter of ``DataContainer`` tensors (``compat.mmcv_cpu_scatter``, one warning);
- on a machine without CUDA only, installs the CPU init of ``dist_init`` (GPU runs stay standard);
- if ``KRADAR_EVAL_ONLY``/``KRADAR_EVAL_FIRST``/``KRADAR_EVAL_SAMPLES`` (or ``KRADAR_MIN_LOADED``,
  ``KRADAR_PREFLIGHT``, ``KRADAR_PROBE_MODEL``) is set, makes the default runner constructor obey it.

mmcv's ``CheckpointLoader`` reads local checkpoints through ``kradar_plugin.loading.load_checkpoint``
(``checkpoint_loading.install_framework_loading``: no code in a checkpoint runs).
Runners built by ``EvalOnlyRunnerConstructor`` load checkpoints through ``checkpoint_loading`` (report,
repairs, ``min_loaded``), evaluate EMA weights before training as after an epoch (``ema``), and check the
distributed pitfalls before a pre-training evaluation (``preflight``).

Without mmcv, or on the OpenMMLab 2.0 stack, importing it installs nothing, so its framework-free module
``kradar_eval_mixin`` (the 1.x dataset ``evaluate``, which the 2.0 tests compare ``KRadarMetric`` with) stays
importable there.
"""
from kradar_plugin._registration import generation_matches, importable

__all__ = ['CollectionError', 'check_rank_indices', 'collected_order', 'EvalOnlyRunnerConstructor',
           'install_env_switch', 'normalize_dist_params', 'EvalOnlyHook']

if importable('mmcv') and generation_matches(__name__):
    from kradar_plugin.distributed.collection import CollectionError, check_rank_indices, collected_order
    from .runner_builder import EvalOnlyRunnerConstructor, install_env_switch
    from .dist_init import install_cpu_support, install_timeout_support
    from kradar_plugin.distributed.dist_params import normalize_dist_params
    from .eval_only_hook import EvalOnlyHook
    from kradar_plugin.compat.yapf_format import install as install_yapf_repair
    from kradar_plugin.compat.mmcv_cpu_scatter import install as install_cpu_scatter_fix

    install_timeout_support()
    install_yapf_repair()
    install_cpu_scatter_fix()
    install_cpu_support()
    install_env_switch()
    from .checkpoint_loading import install_framework_loading
    install_framework_loading()


def __getattr__(name):
    """Say why the runner components are missing (no mmcv, or the OpenMMLab 2.0 stack)."""
    if name in __all__:
        why = ('this environment has the OpenMMLab 2.0 stack, whose counterpart is kradar_plugin.adapters.mmengine'
               if importable('mmcv') else 'mmcv is not installed')
        raise ImportError('kradar_plugin.adapters.mmcv1.%s needs mmcv-full 1.x: %s' % (name, why))
    raise AttributeError('module %r has no attribute %r' % (__name__, name))
