"""Register the adapters whose frameworks are importable; never fail because a framework is absent or
broken.

A framework that is installed but fails to import (``No module named 'mmcv._ext'``, an mmdet3d version
assert, ...) gives ONE warning naming the error and pointing at ``kradar-doctor``, and the rest of the
package keeps working: the doctor and ``kradar-eval`` must run precisely in such environments.
``KRADAR_PLUGIN_REGISTER=0`` skips registration altogether (the command-line tools need none of it).
"""
import importlib
import importlib.util
import os
import warnings


class RegistrationWarning(UserWarning):
    """An installed framework (or our adapter for it) failed to import; its components are missing."""


# (adapter module, the framework module it needs); imported in this order.
ADAPTERS = (
    ('kradar_plugin.compat.mmdet3d_alias', 'mmdet3d'),
    ('kradar_plugin.runner', 'mmcv'),
    ('kradar_plugin.datasets.kradar_dataset', 'mmdet'),
    ('kradar_plugin.models', 'mmdet'),
)
ENV_VAR = 'KRADAR_PLUGIN_REGISTER'
failures = {}   # adapter module -> the exception that stopped it


def _importable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def register_framework_components():
    """Import each adapter whose framework is installed; return the adapters loaded."""
    if os.environ.get(ENV_VAR, '1').strip().lower() in ('0', 'false', 'no', 'off'):
        return []
    loaded, failed = [], []
    for module, framework in ADAPTERS:
        if not _importable(framework):
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - reported below, never silent
            failures[module] = exc
            failed.append('%s is installed but %s failed to import (%s: %s)'
                          % (framework, module, type(exc).__name__, exc))
            continue
        loaded.append(module)
    if failed:
        warnings.warn('kradar_plugin: %s; those components are not registered. Run `kradar-doctor` for the '
                      'version pair to fix.' % '; '.join(failed), RegistrationWarning, stacklevel=3)
    return loaded
