"""Import-time registry patch: give already registered dataset classes the K-Radar ``evaluate``.

For configs: list this module in ``custom_imports`` AFTER the project that registers the dataset::

    custom_imports = dict(imports=['projects.mmdet3d_plugin', 'kradar_plugin',
                                   'kradar_plugin.adapters.mmcv1.patch_echofusion'], allow_failed_imports=False)

It patches the comma-separated names in the environment variable ``KRADAR_PATCH_DATASETS`` (default
``KRadarDataset``, EchoFusion's name) with ``adapters.mmcv1.kradar_eval_mixin.patch_dataset_evaluate``; an
unknown name is a KeyError that says to fix the import order.
"""
from ... import settings
from kradar_plugin.adapters.mmcv1.kradar_eval_mixin import patch_dataset_evaluate

PATCHED = [patch_dataset_evaluate(name.strip())
           for name in (settings.raw(settings.PATCH_DATASETS) or 'KRadarDataset').split(',') if name.strip()]
