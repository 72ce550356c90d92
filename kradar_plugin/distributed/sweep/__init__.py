"""kradar_plugin.distributed.sweep: evaluating several checkpoints in one launch (framework-free part):
``plan`` (the request and the checkpoints to visit), ``loop`` (load, evaluate, record each), ``record``
(the per-checkpoint record), ``summary`` (``sweep.json`` and the table), ``plot`` (``sweep_ap.png``)."""
