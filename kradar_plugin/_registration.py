"""Register the adapters whose frameworks are importable; never fail because a framework is absent."""
import importlib
import importlib.util


def _importable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


# (adapter module, the framework module it needs); imported in this order.
ADAPTERS = (
    ('kradar_plugin.compat.mmdet3d_alias', 'mmdet3d'),
    ('kradar_plugin.runner', 'mmcv'),
    ('kradar_plugin.datasets.kradar_dataset', 'mmdet'),
    ('kradar_plugin.models', 'mmdet'),
)


def register_framework_components():
    """Import each adapter whose framework is installed. An adapter that is present but broken raises:
    hiding it would leave a config pointing at an unregistered type with a worse error later."""
    loaded = []
    for module, framework in ADAPTERS:
        if _importable(framework) and _importable(module):
            importlib.import_module(module)
            loaded.append(module)
    return loaded
