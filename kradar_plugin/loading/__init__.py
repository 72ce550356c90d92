"""kradar_plugin.loading: the files a user names (pickles, ``.npz``, JSON) may come from others, so one policy
reads them all: plain data rebuilt from checked parts (no code runs), limits on the file's size and on the
elements it holds, and the reading in a forked child whose memory and time are bounded; every failure is one
line naming the file.

:mod:`.safe_load` is the way in (``read``, ``read_one``, ``load_file``, ``Limits``, ``LoadError``);
:mod:`.safe_pickle` (with :mod:`.safe_numpy`) reads pickles, :mod:`.safe_files` ``.npz`` and JSON.
"""
