"""Alias of ``kradar_plugin.adapters.mmcv1.kradar_eval_mixin`` (the mmcv 1.x dataset evaluation), kept for
the import path of earlier releases and of users' code: both names are the same module object, so
attributes set on one are seen through the other."""
import sys

from kradar_plugin.adapters.mmcv1 import kradar_eval_mixin as _module

sys.modules[__name__] = _module
