"""Judge of ``box-convention``: a checkpoint trained under the other mmdet3d box convention."""
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
