"""mmengine adapters (OpenMMLab 2.0 stack: mmengine, mmcv 2.x, mmdet 3.x, mmdet3d 1.x): eval-only /
eval-first / eval-samples launches, exact distributed evaluation with fail-fast, CPU (gloo) multi-process
runs, and the K-Radar metric.

Imported by ``kradar_plugin`` when mmengine is importable. Importing it:
- registers ``EvalOnlyHook`` (mmengine ``HOOKS``), ``EvalOnlyRunner`` (``RUNNERS``) and ``KRadarMetric``
  (``METRICS``), found from any scope (mmdet3d's registries fall back to mmengine's);
- if ``KRADAR_EVAL_ONLY``/``KRADAR_EVAL_FIRST``/``KRADAR_EVAL_SAMPLES`` is set, makes ``Runner.from_cfg``
  build runners that obey it (a config with only the ``custom_imports`` line and an unmodified
  ``tools/train.py``).
- makes mmengine's ``CheckpointLoader`` read local checkpoints through ``kradar_plugin.loading.load_checkpoint``
  (``checkpoint_loading``: no code in a checkpoint runs; torch >= 2.6 loads them too).
mmdet3d 1.x components (the K-Radar dataset of the 2.0 demo) are in ``kradar_plugin.adapters.mmengine.kradar_det3d``.
"""
from kradar_plugin.distributed.collection import (CollectionError, check_rank_indices, check_results,
                                                  collected_order)
from .checkpoint_loading import install_framework_loading
from .eval_only_hook import EvalOnlyHook
from .kradar_metric import KRadarMetric
from .runner_builder import EvalOnlyRunner, install_env_switch, with_eval_switch

__all__ = ['CollectionError', 'check_rank_indices', 'check_results', 'collected_order', 'EvalOnlyHook',
           'KRadarMetric', 'EvalOnlyRunner', 'install_env_switch', 'with_eval_switch']

install_env_switch()
install_framework_loading()
