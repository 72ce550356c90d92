"""The evaluator's input conversion: EchoFusion/mmdet3d info pickles and model results -> per-frame columns.

``result_io`` (results -> plain numpy, saved), ``box_convention`` (LiDAR boxes of either mmdet3d box
convention -> the evaluator's camera-style layout), ``kradar_columns`` (all frames at once) and
``kradar_format`` (one info or result converted alone, as EchoFusion's ``format_anno`` does). Pure numpy.
"""
