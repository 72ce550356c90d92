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
    ('kradar_plugin.engine', 'mmengine'),
    ('kradar_plugin.engine.kradar_det3d', 'mmdet3d'),
)
# Adapters written for one OpenMMLab generation: (a file of the framework package that this generation has,
# generation). The other generation's install lacks the file and the adapter is skipped, not reported: mmcv
# 1.x adapters are not tried on mmcv 2.x, mmdet3d 1.x (mmengine) ones not on mmdet3d <= 1.0.0rc6. Without
# mmengine the 1.x adapters are always tried, so a broken mmcv 1.x install is still reported.
GENERATION_MARKERS = {
    'kradar_plugin.runner': ('mmcv/runner', '1.x'),
    'kradar_plugin.datasets.kradar_dataset': ('mmdet/datasets/builder.py', '1.x'),
    'kradar_plugin.models': ('mmdet/models/builder.py', '1.x'),
    'kradar_plugin.engine.kradar_det3d': ('mmdet3d/registry.py', '2.x'),
}
# the adapters whose import installs the KRADAR_EVAL_* switch
SWITCH_ADAPTERS = ('kradar_plugin.runner', 'kradar_plugin.engine')
ENV_VAR = 'KRADAR_PLUGIN_REGISTER'
# the eval-only switch variables (kradar_plugin.runner.eval_mode); named here because that package is
# exactly what may have failed to import
SWITCH_VARS = ('KRADAR_EVAL_ONLY', 'KRADAR_EVAL_FIRST', 'KRADAR_EVAL_SAMPLES', 'KRADAR_MIN_LOADED', 'KRADAR_PREFLIGHT',
               'KRADAR_PROBE_MODEL')
failures = {}   # adapter module -> the exception that stopped it


class SwitchUnavailableError(RuntimeError):
    """A KRADAR_EVAL_* variable asks for eval-only/first/samples but the runner adapter did not import."""


def _requested_switches(environ):
    return ['{}={}'.format(name, environ[name]) for name in SWITCH_VARS
            if environ.get(name, '').strip().lower() not in ('', '0', 'false', 'no', 'off')]


def _importable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _package_has(relative_path):
    """True when ``relative_path`` ('package/sub/path') exists in the installed package (found without
    importing it)."""
    parts = relative_path.split('/')
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return False
    locations = list(getattr(spec, 'submodule_search_locations', None) or []) if spec is not None else []
    return any(os.path.exists(os.path.join(location, *parts[1:])) for location in locations)


def _generation_matches(module):
    marker = GENERATION_MARKERS.get(module)
    if marker is None:
        return True
    path, generation = marker
    if _package_has(path):
        return True
    return generation == '1.x' and not _importable('mmengine')


def register_framework_components():
    """Import each adapter whose framework is installed; return the adapters loaded."""
    if os.environ.get(ENV_VAR, '1').strip().lower() in ('0', 'false', 'no', 'off'):
        return []
    loaded, failed = [], []
    for module, framework in ADAPTERS:
        if not _importable(framework) or not _generation_matches(module):
            continue
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - reported below, never silent
            failures[module] = exc
            failed.append('%s is installed but %s failed to import (%s: %s)'
                          % (framework, module, type(exc).__name__, exc))
            continue
        loaded.append(module)
    requested = _requested_switches(os.environ)
    failed_switch = [m for m in SWITCH_ADAPTERS if m in failures]
    if requested and failed_switch:
        exc = failures[failed_switch[0]]
        raise SwitchUnavailableError(
            '{} is set, but {} failed to import ({}: {}), so the run would train instead of '
            'evaluating. Fix the environment (`kradar-doctor` names the version pair) or unset the '
            'variable.'.format(', '.join(requested), failed_switch[0], type(exc).__name__, exc))
    if failed:
        warnings.warn('kradar_plugin: %s; those components are not registered. Run `kradar-doctor` for the '
                      'version pair to fix.' % '; '.join(failed), RegistrationWarning, stacklevel=3)
    return loaded
