"""mmdet3d against what numpy removed: the aliases np.bool, np.int, np.long, ... (1.24) and np.in1d (2.4)."""
from .versions import parse_version
from .result import CheckResult


# ---------------------------------------------------------------------------------------------------------
# numpy 1.24 expired the aliases deprecated in 1.20: np.bool/np.int/np.float/np.complex/np.object/np.str raise
# AttributeError ("module 'numpy' has no attribute 'bool'"), and np.long is gone too (numpy 1.24.4
# ``numpy/__init__.py``: ``__former_attrs__`` + ``del long``). numpy 2.0 defines np.bool and np.long again
# (as numpy scalar types); np.int/np.float/np.object/np.str stay removed (numpy 2.0.0 ``__init__.py``).
# mmdet3d (git tags of open-mmlab/mmdetection3d):
#   v0.5.0 .. v1.1.0rc3 (every 0.x, 1.0.0rc0..rc6, 1.1.0rc0..rc3) use np.bool in ObjectRangeFilter
#     (``transforms_3d.py``, in most LiDAR train pipelines), dtype=np.long in DataBaseSampler.sample_all
#     (ObjectSample), np.int in PointSegClassMapping/seg_eval/scannet, np.float in scannet eval.
#   v1.1.0 (PR #2339, "Deprecating old type alias due to new version of numpy") replaced them except
#     ``dtype=np.long`` in ``datasets/transforms/dbsampler.py`` (ObjectSample), still there in v1.4.0, the
#     latest release; fixed on dev-1.x by PR #2872 (2024-01-17), in no release.
# ---------------------------------------------------------------------------------------------------------
NUMPY_ALIASES_REMOVED = '1.24'
NUMPY_BOOL_LONG_BACK = '2.0'
MMDET3D_ALIASES_FIXED = '1.1.0'
MMDET3D_NP_LONG_LAST = '1.4.0'
# numpy 2.4 removed np.in1d and np.trapz (deprecated in 2.0; numpy 2.4.6: hasattr is False). mmdet3d 1.4.0, the
# last release, still calls np.in1d in its ScanNet instance-segmentation evaluation
# (``evaluation/functional/scannet_utils/evaluate_semantic_instance.py``; read in its wheel, 2026-11-29); no
# other function removed in numpy 2.x is called there.
NUMPY_IN1D_REMOVED = '2.4'
MMDET3D_IN1D_LAST = '1.4.0'


def numpy_alias_findings(mmdet3d, numpy, pipeline_types=None):
    """mmdet3d vs the numpy aliases it uses. ``pipeline_types``: the transform types of the config to run
    (a set), None when no config is known."""
    mm, np_v = parse_version(mmdet3d), parse_version(numpy)
    if mm is None or np_v is None or np_v < NUMPY_ALIASES_REMOVED:
        return []
    if np_v >= NUMPY_IN1D_REMOVED and MMDET3D_ALIASES_FIXED <= mm <= MMDET3D_IN1D_LAST:
        return [CheckResult('mmdet3d-numpy', 'WARN',
                            "mmdet3d %s's ScanNet instance-segmentation evaluation calls np.in1d, removed in numpy "
                            "2.4 (numpy %s): AttributeError when it evaluates (K-Radar and KITTI-style metrics do "
                            "not call it)" % (mmdet3d, numpy), "pip install 'numpy<2.4'")]
    fix = "pip install 'numpy==1.23.5' (or 'numpy<1.24')"
    if mm < MMDET3D_ALIASES_FIXED:
        if np_v < NUMPY_BOOL_LONG_BACK:
            return [CheckResult('mmdet3d-numpy', 'FAIL',
                                'mmdet3d %s uses np.bool (ObjectRangeFilter, in most train pipelines), np.int '
                                'and np.long, removed in numpy 1.24 (numpy %s): AttributeError at the first '
                                'training batch' % (mmdet3d, numpy), fix)]
        return [CheckResult('mmdet3d-numpy', 'FAIL',
                            'mmdet3d %s uses np.int (PointSegClassMapping, segmentation evaluation) and '
                            'np.float, which numpy %s does not define (removed in 1.24; only np.bool/np.long '
                            'came back in 2.0), and its mmcv-full/torch builds predate numpy 2'
                            % (mmdet3d, numpy), fix)]
    if mm <= MMDET3D_NP_LONG_LAST and np_v < NUMPY_BOOL_LONG_BACK:
        reason = ("mmdet3d %s's ObjectSample (DataBaseSampler.sample_all) uses dtype=np.long, removed in numpy "
                  "1.24 (numpy %s): AttributeError when a GT-sampling pipeline draws its first sample"
                  % (mmdet3d, numpy))
        fix_long = "pip install 'numpy<1.24' or 'numpy>=2' where the stack allows (np.long is back in numpy 2)"
        if pipeline_types is None:
            return [CheckResult('mmdet3d-numpy', 'WARN',
                                reason + ' (give --config to check the pipeline)', fix_long)]
        if 'ObjectSample' in pipeline_types:
            return [CheckResult('mmdet3d-numpy', 'FAIL',
                                reason + ' (the config uses ObjectSample)', fix_long)]
    return []
