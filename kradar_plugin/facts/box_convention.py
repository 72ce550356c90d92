"""The mmdet3d box convention a checkpoint was trained under against the installed mmdet3d's."""
from .versions import BOX_CONVENTION_CHANGED_IN, mmdet3d_box_convention
from .result import CheckResult


# The conventions: versions.mmdet3d_box_convention. mmdet3d's tools/train.py writes ``mmdet3d_version`` into
# checkpoint_config.meta (v0.17.3, v1.0.0rc6), so checkpoint['meta'] carries it; an mmengine runner (mmdet3d >=
# 1.1.0rc0) writes ``mmengine_version`` instead (mmengine 0.10.7 Runner.save_checkpoint) and no mmdet3d version.
MMDET3D_FIRST_MMENGINE = '1.1.0rc0'


def box_convention_findings(checkpoint_mmdet3d, installed_mmdet3d, inferred_from=None):
    """WARN when a checkpoint trained under one mmdet3d box convention is evaluated under the other.

    ``inferred_from``: a text saying how the checkpoint's version was inferred (None: read from its meta)."""
    ckpt, here = mmdet3d_box_convention(checkpoint_mmdet3d), mmdet3d_box_convention(installed_mmdet3d)
    if ckpt is None or here is None or ckpt == here:
        return []
    trained = 'mmdet3d %s' % checkpoint_mmdet3d if inferred_from is None else inferred_from
    return [CheckResult('box-convention', 'WARN',
                        "checkpoint trained with %s ('%s' boxes) but mmdet3d %s is installed ('%s'; the "
                        "convention changed in %s: LiDAR sizes (w,l,h)->(l,w,h), yaw -> camera -yaw-pi/2): "
                        "read under the installed convention, its boxes get swapped sizes and a wrong yaw"
                        % (trained, ckpt, installed_mmdet3d, here, BOX_CONVENTION_CHANGED_IN),
                        "evaluate with box_convention='%s' (dataset.evaluate keyword: evaluation=dict(..., "
                        "box_convention='%s') in the config, i.e. --cfg-options \"evaluation.box_convention=%s\"), or "
                        "install an mmdet3d of the checkpoint's convention" % (ckpt, ckpt, ckpt))]
