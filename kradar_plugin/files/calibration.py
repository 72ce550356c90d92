"""``<seq>/info_calib/calib_radar_lidar.txt``: line 1 ``frame difference,x,y``, line 2 the values, e.g.
``32,-2.54,0.3``. K-Radar and EchoFusion move labels into the radar frame by adding (x, y, z_offset) to every
box centre (no rotation); ``z_offset`` is a configuration value (0.7 m), not in the file."""
import collections

from .errors import KRadarFileError
from .labels import _number
from .text import lines_of

#: K-Radar's and EchoFusion's z offset from the LiDAR to the radar frame (metres; cfg ``calib.z_offset``)
Z_OFFSET = 0.7

Calibration = collections.namedtuple('Calibration', 'path frame_difference x y')


def read_calibration(path):
    """The :class:`Calibration` in ``path``."""
    lines = [line for line in lines_of(path, 'calibration file') if line.strip()]
    if len(lines) < 2:
        raise KRadarFileError(path, 'expected two lines, "frame difference,x,y" and its values', line=len(lines) + 1)
    parts = [p.strip() for p in lines[1].split(',', 3)]     # the three values; a long tail stays one string
    if len(parts) < 3:
        raise KRadarFileError(path, 'expected three values "frame difference,x,y"', line=2, field='values',
                              value=lines[1].strip())
    diff, x, y = (_number(parts[k], path, 2, name) for k, name in enumerate(('frame difference', 'x', 'y')))
    return Calibration(path, diff, x, y)
