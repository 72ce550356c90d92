"""Judges of the subprocess probes: packages that fail to import (``imports``) and a probe that failed
(``probe``)."""
from ..report import Finding


# Modules whose "No module named X" names a different distribution.
_DIST_OF_MODULE = {'sklearn': 'scikit-learn', 'skimage': 'scikit-image', 'cv2': 'opencv-python', 'PIL': 'Pillow',
                   'yaml': 'PyYAML', 'nuscenes': 'nuscenes-devkit', 'lyft_dataset_sdk': 'lyft_dataset_sdk',
                   'mmseg': 'mmsegmentation', 'pycocotools': 'pycocotools', 'shapely': 'shapely'}


def _import_fix(module, error):
    if "No module named 'mmcv._ext'" in error or 'mmcv._ext' in error:
        return 'install mmcv with compiled ops (see the mmcv-full check)'
    if 'is used but incompatible' in error:
        return 'install the versions the package asserts (see the mmcv-range check)'
    if "module 'numpy' has no attribute" in error:
        return "pip install 'numpy<1.24' (see the mmdet3d-numpy check)"
    if error.startswith('ModuleNotFoundError') or error.startswith('ImportError: No module named'):
        missing = error.split("'")[1] if "'" in error else ''
        top = missing.split('.')[0]
        if top:
            return 'pip install %s (then re-run kradar-doctor)' % _DIST_OF_MODULE.get(top, top.replace('_', '-'))
    return 'python -c "import %s" shows the full traceback' % module


def imports(facts):
    errors = facts.get('import-errors')
    if errors is None:
        return Finding('SKIP', facts.get('imports-skipped') or 'not probed')
    findings = []
    for package in sorted(errors):
        module, error = errors[package]
        findings.append(Finding('FAIL', 'import %s fails: %s' % (module, error), _import_fix(module, error)))
    if not findings and facts.get('imports-checked'):
        return Finding('OK', 'import %s: ok' % ', '.join(facts['imports-checked']))
    return findings


def probe_errors(facts):
    error = facts.get('probe-error')
    if error:
        return Finding('WARN', 'probing the frameworks in a subprocess failed: %s' % error,
                       'run python -c "import torch, mmcv._ext" to see the full error')
    return None
