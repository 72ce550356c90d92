"""Judges of ``checkpoint-load`` (will the plugin's loader read the ``--checkpoint``?) and ``box-convention`` (a
checkpoint trained under the other mmdet3d box convention)."""
from ... import facts as F
from ...facts.versions import mmdet3d_box_convention
from ..report import Finding


def box_convention(facts):
    info = facts.get('checkpoint') or {}
    ckpt = facts.get('checkpoint-mmdet3d')
    if not info and not ckpt:
        return Finding('SKIP', 'no --checkpoint given')
    if info.get('error') and not ckpt:
        return Finding('SKIP', 'cannot read the checkpoint meta: %s' % info['error'])
    inferred = None
    if not ckpt and info.get('mmengine_version'):
        ckpt = F.MMDET3D_FIRST_MMENGINE
        inferred = ('an mmengine runner (mmengine %s: mmdet3d >= %s)'
                    % (info['mmengine_version'], F.MMDET3D_FIRST_MMENGINE))
    if not ckpt:
        return Finding('SKIP', 'the checkpoint meta records no mmdet3d_version (not saved by an mmdet3d '
                               'tools/train.py)')
    convention = mmdet3d_box_convention(ckpt)
    installed = facts.get('mmdet3d')
    trained = inferred or 'mmdet3d %s' % ckpt
    if not installed:
        return Finding('SKIP', "mmdet3d not installed; the checkpoint (%s) uses '%s' boxes: evaluate with "
                               "box_convention='%s'" % (trained, convention, convention))
    return F.box_convention_findings(ckpt, installed, inferred) or Finding(
        'OK', "checkpoint (%s) and installed mmdet3d %s share the '%s' box convention" % (trained, installed,
                                                                                         convention))


def checkpoint_load(facts):
    """FAIL for a checkpoint the plugin's loader refuses or cannot read: an eval-only run stops on it."""
    info = facts.get('checkpoint') or {}
    if not info:
        return Finding('SKIP', 'no --checkpoint given')
    path = info.get('path', 'the checkpoint')
    if info.get('refused'):
        return Finding('FAIL', 'kradar_plugin.loading.load_checkpoint refuses %s: %s' % (path, info['error']),
                       'load it only if you trust where it came from: --trust-checkpoint, KRADAR_TRUST_CHECKPOINT=1 '
                       'or trust_checkpoint=True (full unpickling runs any code the file holds); better, ask for '
                       'a checkpoint of tensors and plain data')
    if info.get('error'):
        return Finding('FAIL', 'cannot read %s: %s' % (path, info['error']),
                       'copy or download it again and compare its size/checksum with the original')
    return Finding('OK', '%s loads through kradar_plugin.loading.load_checkpoint (%s format; nothing in it runs)'
                   % (path, info.get('format')))
