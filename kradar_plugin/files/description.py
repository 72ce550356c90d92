"""``<seq>/description.txt``: one line ``road,time,weather`` (no spaces). K-Radar's writer ends it without a
newline, other copies with one: both read the same, the values stripped."""
import collections

from .errors import KRadarFileError
from .text import lines_of

ROADS = ('urban', 'highway', 'countryside', 'alleyway', 'parkinglots', 'shoulder', 'mountain', 'university')
TIMES = ('day', 'night')
WEATHERS = ('normal', 'overcast', 'fog', 'rain', 'sleet', 'lightsnow', 'heavysnow')

Description = collections.namedtuple('Description', 'road_type capture_time climate')


def read_description(path):
    """The :class:`Description` in ``path`` (values outside K-Radar's lists are kept: they form groups of
    their own; an empty value is an error naming the field)."""
    lines = [line for line in lines_of(path, 'description file') if line.strip()]
    if not lines:
        raise KRadarFileError(path, 'empty description: expected "road,time,weather"', line=1)
    parts = [p.strip() for p in lines[0].split(',', 3)]     # a fourth part is an error: never split further
    if len(parts) != 3:
        raise KRadarFileError(path, 'expected "road,time,weather"', line=1, field='description',
                              value=lines[0].strip())
    for value, field, known in zip(parts, ('road', 'time', 'weather'), (ROADS, TIMES, WEATHERS)):
        if not value:
            raise KRadarFileError(path, 'expected one of {}'.format(', '.join(known)), line=1, field=field,
                                  value=value)
    return Description(*parts)
