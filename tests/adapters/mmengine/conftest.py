"""tests/adapters/mmengine run on the OpenMMLab 2.0 stack (.venv-mm2: mmengine, mmcv 2.1 with ops, mmdet3d 1.4); on any
other environment they are not collected."""
import importlib.util
import os


def _has(path):
    parts = path.split('/')
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return False
    locations = list(getattr(spec, 'submodule_search_locations', None) or []) if spec else []
    return any(os.path.exists(os.path.join(loc, *parts[1:])) for loc in locations)


MM2_STACK = _has('mmengine') and _has('mmdet3d/registry.py') and _has('mmcv/transforms')
if not MM2_STACK:
    collect_ignore_glob = ['test_*.py']
