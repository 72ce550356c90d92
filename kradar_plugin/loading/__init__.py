"""kradar_plugin.loading: the files a user names (pickles, ``.npz``, JSON) may come from others, so one policy
reads them all: plain data rebuilt from checked parts (no code runs), limits on the file's size and on the
elements it holds, and the reading in a forked child whose memory and time are bounded; every failure is one
line naming the file.

:mod:`.safe_load` is the way in (``read``, ``read_one``, ``load_file``, ``Limits``, ``LoadError``);
:mod:`.safe_pickle` (with :mod:`.safe_numpy`) reads pickles, :mod:`.safe_files` ``.npz`` and JSON;
:func:`load_checkpoint` (:mod:`.safe_checkpoint`, with :mod:`.torch_archive`, :mod:`.checkpoint_pickle` and
:mod:`.tensor_builder`) reads torch checkpoints under the same policy.
"""

__all__ = ['load_checkpoint', 'load_checkpoint_tree', 'CheckpointError']


def __getattr__(name):
    """``load_checkpoint`` (:mod:`.safe_checkpoint`) on first use: importing the package reads nothing."""
    if name in __all__:
        from . import safe_checkpoint
        return getattr(safe_checkpoint, name)
    raise AttributeError('module {!r} has no attribute {!r}'.format(__name__, name))
