"""K-Radar's own files, read directly (numpy only, Python 3.7+): label files of every version (v1.0, v1.1,
v2.0, v2.1), the radar-LiDAR calibration, the sequence descriptions (conditions), the split lists, and the
KITTI-style prediction folders of K-Radar's pipeline. In order: :mod:`labels` (one label file) ->
:mod:`tree` (dataset roots, sequences, label folders per version) -> :mod:`radar_frame` (objects as K-Radar's
loader gives them) -> :mod:`infos` (EchoFusion's info layout; ``kradar-create-data``), and
:mod:`kitti_folders` (``kradar-eval --kitti-dir``), :mod:`relabel` (saved predictions against another
label version). Every malformed file raises :class:`~.errors.KRadarFileError` naming file, line, field and
value.
"""
from .errors import KRadarFileError

__all__ = ['KRadarFileError']
