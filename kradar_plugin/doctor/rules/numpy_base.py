"""Judge of ``numpy-base``: the numpy that imports is not the one the package manager records."""
from ...facts.versions import parse_version
from ..report import Finding


def numpy_base(facts):
    numpy, base, runtime = facts.get('numpy'), facts.get('numpy-base'), facts.get('numpy-runtime')
    if base and numpy and parse_version(base) != parse_version(numpy):
        return Finding('FAIL', 'conda has numpy %s but numpy-base %s: numpy %s is what imports (conda#7481)'
                       % (numpy, base, base), 'conda install numpy=%s numpy-base=%s' % (numpy, numpy))
    if runtime and (base or numpy) and parse_version(runtime) != parse_version(base or numpy):
        return Finding('WARN', 'numpy %s imports but the package manager records numpy %s (a second copy from '
                               'pip/conda, numpy#9670)' % (runtime, base or numpy),
                       'pip uninstall -y numpy (repeat until none is left), then install one numpy==%s'
                       % (base or numpy))
    if not base and not facts.get('conda'):
        return Finding('SKIP', 'not a conda environment (numpy %s)' % (runtime or numpy))
    return None
