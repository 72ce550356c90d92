"""One error type for K-Radar's own files: a ValueError whose one-line message names the file, and where it
applies the line number, the field and the value as written."""


class KRadarFileError(ValueError):
    """A K-Radar dataset or prediction file that cannot be read as its format says."""

    def __init__(self, path, problem, line=None, field=None, value=None):
        self.path, self.problem, self.line, self.field, self.value = path, problem, line, field, value
        where = str(path) if line is None else '{}:{}'.format(path, line)
        what = ''
        if field is not None:
            what = ' field {}'.format(field) if value is None else ' field {} = {!r}'.format(field, value)
        super(KRadarFileError, self).__init__('{}:{} {}'.format(where, what, problem))
