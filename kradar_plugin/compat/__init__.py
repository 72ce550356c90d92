"""kradar_plugin.compat: repairs of known framework bugs and drop-in aliases of mmdet3d's modules."""


class CompatRepairWarning(UserWarning):
    """A known bug of an installed framework release was repaired in place (one warning per repair).

    Its own category so that ``warnings.filterwarnings('ignore', category=CompatRepairWarning)`` or
    ``-W error::UserWarning`` users can tell a documented repair from a failure.
    """
