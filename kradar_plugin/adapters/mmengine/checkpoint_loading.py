"""The mmengine side of checkpoint loading (the mirror of ``adapters/mmcv1/checkpoint_loading.py``): every local
checkpoint mmengine reads goes through ``kradar_plugin.loading.load_checkpoint``, once, with no code in the file
run and on every torch (>= 2.6 too, with no ``weights_only=False`` fallback and no framework warning).

``install_framework_loading`` (at import of the adapter) makes :func:`load_from_local` mmengine's
``CheckpointLoader`` scheme for local paths: ``Runner.load_checkpoint`` (``load_from``, the checkpoint sweep and
``--watch``), ``Runner.resume``, ``EMAHook``'s averaged weights (it reads them from the checkpoint the runner
loaded), ``init_cfg`` pretrained weights and mmengine's ``load_checkpoint`` all read through it; a refused or
unreadable file is one ``CheckpointReadError`` naming it, the reason, and how to opt in.
"""
from kradar_plugin.distributed import checkpoint_report as cr
from kradar_plugin.distributed.failfast import rank_tag


def load_from_local(filename, map_location):
    """mmengine's local-file scheme, read by the plugin's loader (the name keeps mmengine's log line: 'Load
    checkpoint from local path: ...')."""
    return cr.read_checkpoint(filename, map_location, rank_tag=rank_tag())


def install_framework_loading():
    """Make :func:`load_from_local` mmengine's ``CheckpointLoader`` scheme for local paths (``''``)."""
    from mmengine.runner.checkpoint import CheckpointLoader
    CheckpointLoader.register_scheme(prefixes='', loader=load_from_local, force=True)
