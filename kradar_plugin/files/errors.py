"""One error type for K-Radar's own files: a ValueError whose one-line message names the file, and where it
applies the line number, the field and the value as written.

Values come from files that others hand over: a value is quoted with at most :data:`QUOTE_LIMIT` characters
(a 10 MB line of commas stays a short error line, and little of a file reached by mistake is shown), and
integers are length-checked before ``int()`` (Python 3.11's integer-string limit raises an error that names
no file)."""

#: the most characters of a value that an error message quotes
QUOTE_LIMIT = 80
#: the most digits :func:`checked_int` reads by default (int64 holds 18)
INT_DIGITS = 18


def quote(value, limit=QUOTE_LIMIT):
    """``repr(value)`` of at most ``limit`` characters of the value, with ``...`` and its length when cut."""
    if isinstance(value, (str, bytes)) and len(value) > limit:
        return '{!r}... ({:,} characters)'.format(value[:limit], len(value))
    text = repr(value)
    if len(text) > limit:
        return '{}... ({:,} characters)'.format(text[:limit], len(text))
    return text


class KRadarFileError(ValueError):
    """A K-Radar dataset or prediction file that cannot be read as its format says."""

    def __init__(self, path, problem, line=None, field=None, value=None):
        self.path, self.problem, self.line, self.field, self.value = path, problem, line, field, value
        where = str(path) if line is None else '{}:{}'.format(path, line)
        what = ''
        if field is not None:
            what = ' field {}'.format(field) if value is None else ' field {} = {}'.format(field, quote(value))
        super(KRadarFileError, self).__init__('{}:{} {}'.format(where, what, problem))


def checked_int(text, path, line, field, digits=INT_DIGITS):
    """``int(text)`` (spaces around allowed, as ``int`` allows them) of at most ``digits`` digits; anything
    else is a :class:`KRadarFileError` naming ``path``:``line``, ``field`` and the value (quoted short)."""
    body = text.strip()
    if len(body.lstrip('+-')) > digits:
        raise KRadarFileError(path, 'expected an integer of at most {} digits'.format(digits), line=line,
                              field=field, value=text)
    try:
        return int(body)
    except ValueError:
        raise KRadarFileError(path, 'expected an integer', line=line, field=field, value=text)
