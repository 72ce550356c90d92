"""Import the installed OpenMMLab packages (models, datasets) in fresh interpreters and report the first
module of each that fails, with its error line."""
import json
import subprocess
import sys


# Modules the import probe imports for each installed OpenMMLab package, in order (a package's later modules
# are not tried once one fails). ``.models``/``.datasets`` pull in mmcv.ops (mmcv._ext) and the datasets'
# third-party dependencies: an install that passes ``import mmdet3d`` can still fail there.
IMPORT_MODULES = (
    ('mmengine', ('mmengine', 'mmengine.runner')),
    ('mmcv', ('mmcv',)),
    ('mmdet', ('mmdet', 'mmdet.models', 'mmdet.datasets')),
    ('mmseg', ('mmseg', 'mmseg.models')),
    ('mmdet3d', ('mmdet3d', 'mmdet3d.models', 'mmdet3d.datasets')),
)

# Run in a subprocess by import_probe: one line per module, flushed, so a crash loses only the module it hit.
_IMPORT_SCRIPT = r'''
import json, sys, warnings
warnings.simplefilter('ignore')
def err(e):
    lines = [l for l in ('%s: %s' % (type(e).__name__, e)).strip().splitlines() if l.strip()]
    return (lines[0] if lines else type(e).__name__)[:300]
for group in json.loads(sys.argv[1]):
    for module in group:
        sys.stdout.write('KRADAR_DOCTOR_IMPORT_BEGIN %s\n' % module); sys.stdout.flush()
        try:
            __import__(module)
            status = 'ok'
        except BaseException as e:
            status = err(e)
        sys.stdout.write('KRADAR_DOCTOR_IMPORT %s\n' % json.dumps([module, status])); sys.stdout.flush()
        if status != 'ok':
            break
'''


def _run_imports(groups, python, timeout):
    """One interpreter importing ``groups`` (lists of modules): ({module: 'ok' or error}, died or None,
    timed_out)."""
    cmd = [python or sys.executable, '-c', _IMPORT_SCRIPT, json.dumps([list(g) for g in groups])]
    stdout, died, timed_out = '', None, False
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              universal_newlines=True)
        stdout = proc.stdout
        if proc.returncode != 0:
            tail = [l for l in proc.stderr.splitlines() if l.strip()]
            died = 'the interpreter exited with %s (%s)' % (proc.returncode, tail[-1][:200] if tail else 'no output')
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode('utf-8', 'replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
        died, timed_out = 'no answer within %d s' % timeout, True
    status, begun = {}, None
    for line in stdout.splitlines():
        if line.startswith('KRADAR_DOCTOR_IMPORT_BEGIN '):
            begun = line.split(' ', 1)[1]
        elif line.startswith('KRADAR_DOCTOR_IMPORT '):
            module, result = json.loads(line[len('KRADAR_DOCTOR_IMPORT '):])
            status[module] = result
            begun = None
    if begun is not None and died:
        status[begun] = died
    return status, died, timed_out


def import_probe(packages, python=None, timeout=300):
    """Import the IMPORT_MODULES of ``packages`` in a fresh interpreter.

    Returns {'import-errors': {package: (module, error line)}, 'imports-checked': [modules that imported]}. A
    module whose import kills the interpreter gets that as its error, and the packages not reached yet are
    imported in a new interpreter (after a timeout they are reported as not probed)."""
    groups = [(p, mods) for p, mods in IMPORT_MODULES if p in packages]
    status, pending = {}, list(groups)
    try:
        while pending:
            found, died, timed_out = _run_imports([m for _, m in pending], python, timeout)
            status.update(found)
            pending = [(p, mods) for p, mods in pending if mods[0] not in found]
            if died and not found:  # the interpreter died before its first import
                for p, mods in pending:
                    status[mods[0]] = died
            if not died or not found:
                break
            if timed_out:
                for p, mods in pending:
                    status[mods[0]] = 'not probed: an earlier import hung (%s)' % died
                break
    except OSError as e:
        return {'probe-error': 'import probe: %s' % e}
    errors, checked = {}, []
    for package, modules in groups:
        for module in modules:
            if module not in status:
                break
            if status[module] != 'ok':
                errors[package] = (module, status[module])
                break
            checked.append(module)
    return {'import-errors': errors, 'imports-checked': checked}
