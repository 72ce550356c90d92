"""Reading pickles that come from elsewhere: only what K-Radar files hold.

A pickle can run any code while it loads. ``kradar-eval`` reads annotation, result and info pickles written
by our runner, by EchoFusion's tools and by K-Radar's pipeline: numpy arrays, numpy scalars and dtypes,
builtin containers, strings and numbers. :func:`load` admits exactly those and refuses anything else with an
error naming the class; ``--trust-pickle`` (``trusted=True``) reads with the plain unpickler.
"""
import pickle

#: builtins a K-Radar pickle may name (Python 2 and protocol <= 2 pickles spell the module ``__builtin__``)
_BUILTINS = ('list', 'dict', 'tuple', 'set', 'frozenset', 'str', 'bytes', 'bytearray', 'int', 'float', 'complex',
             'bool', 'slice', 'range')

#: (module, name) a K-Radar pickle may reference: numpy's array/scalar/dtype reconstruction (numpy 1.x
#: writes ``numpy.core.*``, numpy 2.x ``numpy._core.*``; protocol 5 adds ``_frombuffer``), the bytes helper
#: of protocol <= 2 pickles, OrderedDict (mmcv.dump) and builtins
ALLOWED = frozenset([
    ('numpy', 'ndarray'), ('numpy', 'dtype'),
    ('numpy.core.multiarray', '_reconstruct'), ('numpy.core.multiarray', 'scalar'),
    ('numpy._core.multiarray', '_reconstruct'), ('numpy._core.multiarray', 'scalar'),
    ('numpy.core.numeric', '_frombuffer'), ('numpy._core.numeric', '_frombuffer'),
    ('collections', 'OrderedDict'), ('_codecs', 'encode'),
] + [(module, n) for n in _BUILTINS for module in ('builtins', '__builtin__')])


def _numpy_core(module):
    """``module`` as the installed numpy names it: a numpy 2 pickle (``numpy._core``) read by numpy 1.x
    finds ``numpy.core``; a numpy 1.x pickle read by numpy 2 finds ``numpy._core`` (no deprecated alias)."""
    import numpy
    new_layout = int(numpy.__version__.split('.')[0]) >= 2
    for old, new in (('numpy.core.', 'numpy._core.'),):
        if new_layout and module.startswith(old):
            return new + module[len(old):]
        if not new_layout and module.startswith(new):
            return old + module[len(new):]
    return module


class RefusedPickleError(pickle.UnpicklingError):
    """The pickle references a class outside :data:`ALLOWED`."""


class SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in ALLOWED:
            return super(SafeUnpickler, self).find_class(_numpy_core(module), name)
        raise RefusedPickleError(
            'refused to load {}.{}: K-Radar evaluation pickles hold only numpy arrays/scalars, lists, dicts, '
            'strings and numbers (pass --trust-pickle if you trust this file; loading a pickle can run any '
            'code)'.format(module, name))


def load(f, trusted=False):
    """The object pickled in the binary file ``f``."""
    if trusted:
        return pickle.load(f)
    return SafeUnpickler(f).load()
