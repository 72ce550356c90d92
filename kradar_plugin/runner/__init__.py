"""mmcv 1.x runner adapters: eval-only / eval-first / eval-samples launches, evaluation guards (exact
collection, saved predictions, fail-fast), and the launch support for CPU (gloo) multi-process runs.

Imported by ``kradar_plugin`` when mmcv is importable. Importing it:
- registers ``EvalOnlyHook`` (mmcv HOOKS) and ``EvalOnlyRunnerConstructor`` (mmcv RUNNER_BUILDERS);
- makes ``dist_params=dict(timeout=<seconds>)`` work (converted to a timedelta);
- on a machine without CUDA only, installs the CPU replacements of ``cpu_dist`` (GPU runs stay standard);
- if ``KRADAR_EVAL_ONLY``/``KRADAR_EVAL_FIRST``/``KRADAR_EVAL_SAMPLES`` (or ``KRADAR_MIN_LOADED``,
  ``KRADAR_PREFLIGHT``, ``KRADAR_PROBE_MODEL``) is set, makes the default runner constructor obey it.

Runners built by ``EvalOnlyRunnerConstructor`` load checkpoints through ``checkpoint_guard`` (report,
repairs, ``min_loaded``), evaluate EMA weights before training as after an epoch (``ema``), and check the
distributed pitfalls before a pre-training evaluation (``preflight``).
"""
from kradar_plugin.distributed.collection import CollectionError, check_rank_indices, collected_order  # noqa: F401
from .constructor import EvalOnlyRunnerConstructor, install_env_switch  # noqa: F401
from .cpu_dist import install_cpu_support, install_timeout_support
from kradar_plugin.distributed.dist_params import normalize_dist_params  # noqa: F401
from .eval_only_hook import EvalOnlyHook  # noqa: F401

install_timeout_support()
install_cpu_support()
install_env_switch()
