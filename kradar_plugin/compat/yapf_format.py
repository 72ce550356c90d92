"""mmcv 1.x ``Config.pretty_text`` with yapf >= 0.40.2: the documented repair.

mmcv-full <= 1.7 calls ``yapf.yapflib.yapf_api.FormatCode(text, style_config=..., verify=True)``; yapf
0.40.2 removed ``verify``, so every ``cfg.pretty_text`` (logged by mmdet3d's and EchoFusion's
``tools/train.py`` before any training) raises ``TypeError: FormatCode() got an unexpected keyword
argument 'verify'`` -- in a distributed launch, on every rank, as the blog's ``exitcode: 1``.

Once ``kradar_plugin`` is imported (the config's ``custom_imports`` runs before the script formats the
config), mmcv's config module calls a ``FormatCode`` that drops ``verify`` when the installed yapf has no
such argument, with one warning that names the fix (``pip install yapf==0.40.1``). The formatted text is
the same: ``verify`` only re-parsed yapf's output. With a yapf that accepts ``verify`` nothing changes.
"""
import functools
import inspect
import warnings

from kradar_plugin.compat import CompatRepairWarning

FIX = 'pip install yapf==0.40.1'


def _accepts_verify(format_code):
    try:
        return 'verify' in inspect.signature(format_code).parameters
    except (TypeError, ValueError):
        return True


def install():
    """Wrap ``FormatCode`` in mmcv 1.x's config module when yapf lacks ``verify``; True if wrapped."""
    try:
        from mmcv.utils import config as mmcv_config
    except ImportError:  # mmcv 2.x / mmengine: not this mmcv's problem
        return False
    original = getattr(mmcv_config, 'FormatCode', None)
    if original is None or getattr(original, '_kradar_patched', False) or _accepts_verify(original):
        return False

    @functools.wraps(original)
    def format_code(*args, **kwargs):
        kwargs.pop('verify', None)
        return original(*args, **kwargs)

    format_code._kradar_patched = True
    mmcv_config.FormatCode = format_code
    try:
        import yapf
        version = getattr(yapf, '__version__', '?')
    except ImportError:
        version = '?'
    warnings.warn('kradar_plugin: yapf {} has no FormatCode(verify=...), which mmcv {}\'s Config.pretty_text '
                  'passes; the argument is dropped so that the config can be printed (same text). The fix: '
                  '`{}`.'.format(version, _mmcv_version(), FIX), CompatRepairWarning)
    return True


def _mmcv_version():
    try:
        import mmcv
        return mmcv.__version__
    except Exception:  # noqa: BLE001
        return '1.x'
