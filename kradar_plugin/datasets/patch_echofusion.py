"""Documented alias of :mod:`kradar_plugin.adapters.mmcv1.patch_echofusion` for configs that list
``kradar_plugin.datasets.patch_echofusion`` in ``custom_imports``: importing it applies the same patch."""
from kradar_plugin.adapters.mmcv1.patch_echofusion import PATCHED  # noqa: F401
