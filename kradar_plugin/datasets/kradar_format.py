"""The former home of the dataset-side evaluation entry points, kept so that existing imports work; the
code lives in :mod:`kradar_plugin.evaluation.inputs.kradar_format`."""
from kradar_plugin.evaluation.inputs.kradar_format import (build_annos, condition_table, converted,
                                                           evaluate_results, info_to_gt_anno, result_to_dt_anno)

__all__ = ['build_annos', 'condition_table', 'converted', 'evaluate_results', 'info_to_gt_anno',
           'result_to_dt_anno']
