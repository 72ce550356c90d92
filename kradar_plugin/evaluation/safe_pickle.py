"""Reading pickles that come from elsewhere: only what K-Radar files hold.

A pickle can run any code while it loads. ``kradar-eval`` reads annotation, result and info pickles written
by our runner, by EchoFusion's tools and by K-Radar's pipeline: numpy arrays, numpy scalars and dtypes,
builtin containers, strings and numbers. :func:`load` admits exactly those and refuses anything else with an
error naming the class; ``--trust-pickle`` (``trusted=True``) reads with the plain unpickler.
"""
import pickle

#: (module, name) a K-Radar pickle may reference: numpy's array/scalar reconstruction under numpy 1.x and
#: 2.x module names, and builtins
ALLOWED = frozenset([
    ('numpy', 'ndarray'), ('numpy', 'dtype'),
    ('numpy.core.multiarray', '_reconstruct'), ('numpy.core.multiarray', 'scalar'),
    ('numpy._core.multiarray', '_reconstruct'), ('numpy._core.multiarray', 'scalar'),
    ('numpy.core.numeric', '_frombuffer'), ('numpy._core.numeric', '_frombuffer'),
    ('collections', 'OrderedDict'), ('_codecs', 'encode'),  # protocol-2 pickles spell array bytes with it
] + [(m, n) for m in ('builtins', '__builtin__') for n in ('list', 'dict', 'tuple', 'set', 'frozenset', 'str', 'bytes', 'bytearray', 'int',
                              'float', 'complex', 'bool', 'slice', 'range')])


class RefusedPickleError(pickle.UnpicklingError):
    """The pickle references a class outside :data:`ALLOWED`."""


class SafeUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in ALLOWED:
            return super(SafeUnpickler, self).find_class(module, name)
        raise RefusedPickleError(
            'refused to load {}.{}: K-Radar evaluation pickles hold only numpy arrays/scalars, lists, dicts, '
            'strings and numbers (pass --trust-pickle if you trust this file; loading a pickle can run any '
            'code)'.format(module, name))


def load(f, trusted=False):
    """The object pickled in the binary file ``f``."""
    if trusted:
        return pickle.load(f)
    return SafeUnpickler(f).load()
