"""mmengine's ``torch.load`` without ``weights_only`` against torch >= 2.6's new default."""
from .versions import parse_version
from .result import CheckResult


# ---------------------------------------------------------------------------------------------------------
# torch 2.6 flipped torch.load's default to weights_only=True (pytorch docs). mmengine 0.10.7 (the latest
# release, 2025-03-04) calls torch.load(filename, map_location=...) in runner/checkpoint.py without
# weights_only, and an mmengine checkpoint pickles mmengine objects (the message hub's HistoryBuffer) and numpy
# arrays: load_from/resume raise "Weights only load failed". Fixed on main by PR #1670 (commit 151a87ab,
# 2025-10-26), whose version string is 0.11.0rc0 (main since 2025-09-15). TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
# (torch's escape hatch) restores full unpickling, which runs any code a checkpoint holds: the fix named here is
# kradar_plugin's own loader (kradar_plugin.loading.load_checkpoint), which becomes mmengine's CheckpointLoader
# scheme for local files once the config imports kradar_plugin.
# ---------------------------------------------------------------------------------------------------------
TORCH_WEIGHTS_ONLY_DEFAULT = '2.6'
MMENGINE_WEIGHTS_ONLY_FIXED = '0.11.0rc0'
PLUGIN_LOADER_FIX = ("custom_imports=dict(imports=['kradar_plugin']) in the config (or kradar_plugin's "
                     "tools/train.py): mmengine then reads local checkpoints through "
                     "kradar_plugin.loading.load_checkpoint, on every torch and without running their code")


def mmengine_torch_load_findings(mmengine, torch):
    m, t = parse_version(mmengine), parse_version(torch)
    if m is None or t is None or m >= MMENGINE_WEIGHTS_ONLY_FIXED or t < TORCH_WEIGHTS_ONLY_DEFAULT:
        return []
    return [CheckResult('mmengine-torch', 'FAIL',
                        "mmengine %s calls torch.load() without weights_only; torch %s defaults to "
                        "weights_only=True: without kradar_plugin's loader, load_from/resume of an mmengine "
                        "checkpoint raise UnpicklingError \"Weights only load failed\"" % (mmengine, torch),
                        PLUGIN_LOADER_FIX)]
