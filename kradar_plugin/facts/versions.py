"""Tolerant version parsing and comparison without ``packaging``.

Accepts what environments actually report: '1.10.0+cu113', '2.0.0rc1', '1.0.0.dev0', '0.48.0', '11.3',
'580.65.06', 'v0.17.3', ' 1.20 '. Pre-releases sort before the release (2.0.0rc1 < 2.0.0), post-releases
after; local tags ('+cu113') are kept aside and never compared. Also normalises distribution names
('mmcv_full' -> 'mmcv-full', 'numpy_base' -> 'numpy-base').
"""
import functools
import re

__all__ = ['Version', 'parse_version', 'compare', 'normalize_name', 'cuda_from_local_tag',
           'major_minor', 'in_range', 'mmdet3d_box_convention', 'BOX_CONVENTIONS']

_VERSION_RE = re.compile(
    r'^\s*v?(?P<release>\d+(?:\.\d+)*)'
    r'(?:[-_.]?(?P<pre>a|alpha|b|beta|rc|c|pre|preview)[-_.]?(?P<pre_n>\d*))?'
    r'(?:[-_.]?(?P<post>post|rev|r)[-_.]?(?P<post_n>\d*))?'
    r'(?:[-_.]?(?P<dev>dev)[-_.]?(?P<dev_n>\d*))?'
    r'(?:\+(?P<local>[A-Za-z0-9._-]+))?\s*$', re.IGNORECASE)

# Ordering of the pre-release stage: dev < a < b < rc < (final) < post.
_STAGE = {'dev': -4, 'a': -3, 'alpha': -3, 'b': -2, 'beta': -2, 'rc': -1, 'c': -1, 'pre': -1, 'preview': -1}


@functools.total_ordering
class Version(object):
    """A parsed version; compare with <, <=, ==, ... against another Version or a string."""

    __slots__ = ('text', 'release', 'stage', 'local')

    def __init__(self, text):
        if isinstance(text, Version):
            self.text, self.release, self.stage, self.local = text.text, text.release, text.stage, text.local
            return
        if not isinstance(text, str):
            text = '.'.join(str(p) for p in text) if isinstance(text, (tuple, list)) else str(text)
        match = _VERSION_RE.match(text)
        if match is None:
            raise ValueError('cannot parse version %r' % (text,))
        release = [int(p) for p in match.group('release').split('.')]
        while len(release) > 1 and release[-1] == 0:
            release.pop()  # 1.20.0 == 1.20
        if match.group('pre'):
            stage = (_STAGE[match.group('pre').lower()], int(match.group('pre_n') or 0))
        elif match.group('post'):
            stage = (1, int(match.group('post_n') or 0))
        elif match.group('dev'):
            stage = (_STAGE['dev'], int(match.group('dev_n') or 0))
        else:
            stage = (0, 0)
        self.text = text.strip()
        self.release = tuple(release)
        self.stage = stage
        self.local = match.group('local')

    def _key(self):
        return (self.release, self.stage)

    def __eq__(self, other):
        return self._key() == _as_version(other)._key()

    def __lt__(self, other):
        return self._key() < _as_version(other)._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return 'Version(%r)' % (self.text,)

    def __str__(self):
        return self.text

    @property
    def public(self):
        """The version without its local tag: '1.10.0+cu113' -> '1.10.0'."""
        return self.text.split('+', 1)[0]

    def part(self, index):
        """The release component at ``index`` (0 = major), 0 when absent."""
        return self.release[index] if index < len(self.release) else 0


def _as_version(value):
    return value if isinstance(value, Version) else Version(value)


def parse_version(text):
    """Version for ``text``, or None when ``text`` is None/empty/unparseable (an unknown fact)."""
    if text is None or isinstance(text, Version):
        return text
    try:
        return Version(text)
    except ValueError:
        return None


def compare(a, b):
    """-1, 0 or 1 like cmp(a, b) for two version strings or Versions."""
    a, b = _as_version(a), _as_version(b)
    return (a > b) - (a < b)


def major_minor(version):
    """'1.10.0+cu113' -> '1.10'; None stays None."""
    v = parse_version(version)
    if v is None:
        return None
    return '%d.%d' % (v.part(0), v.part(1))


def in_range(version, minimum=None, maximum=None, max_inclusive=True):
    """Whether ``version`` lies in [minimum, maximum] (or [minimum, maximum) when not max_inclusive)."""
    v = _as_version(version)
    if minimum is not None and v < minimum:
        return False
    if maximum is not None:
        return v <= maximum if max_inclusive else v < maximum
    return True


def normalize_name(name):
    """Distribution name in one spelling: lower case, '_' and '.' -> '-' ('mmcv_full' -> 'mmcv-full')."""
    return re.sub(r'[-_.]+', '-', str(name).strip().lower())


def cuda_from_local_tag(version):
    """CUDA version encoded in a local tag: '1.10.0+cu113' -> '11.3', '2.0.1+cu117' -> '11.7',
    '+cu102' -> '10.2', '+cpu' -> 'cpu'; None when there is no such tag."""
    v = parse_version(version)
    if v is None or not v.local:
        return None
    local = v.local.lower()
    if local.startswith('cpu'):
        return 'cpu'
    match = re.match(r'cu(\d+)$', local)
    if not match:
        return None
    digits = match.group(1)
    return '%s.%s' % (digits[:-1], digits[-1]) if len(digits) >= 2 else None


# mmdet3d's box conventions. 1.0.0rc0 (the coordinate-system refactor, developed on the v1.0.0.dev0 branch)
# changed LiDAR boxes from (w, l, h) sizes with the yaw kept to (l, w, h) sizes with the yaw mapped to camera
# -yaw - pi/2; every later release (1.0.0rc1..rc6, the mmengine-based 1.1+) keeps the new one.
BOX_CONVENTION_LEGACY = 'mmdet3d<1.0'
BOX_CONVENTION_V1 = 'mmdet3d>=1.0'
BOX_CONVENTIONS = (BOX_CONVENTION_LEGACY, BOX_CONVENTION_V1)
BOX_CONVENTION_CHANGED_IN = '1.0.0rc0'


def mmdet3d_box_convention(version):
    """The box convention of mmdet3d ``version`` ('0.17.3', '1.0.0rc6', 'v0.18.1', a Version): 'mmdet3d<1.0'
    for major version 0 (LiDAR sizes (w, l, h), yaw kept), 'mmdet3d>=1.0' for 1 and later, pre-releases and
    v1.0.0.dev0 builds included (sizes (l, w, h), yaw -> camera -yaw - pi/2); None when unknown. The names are
    the values of the K-Radar dataset's ``box_convention`` option."""
    v = parse_version(version)
    if v is None:
        return None
    return BOX_CONVENTION_LEGACY if v.part(0) < 1 else BOX_CONVENTION_V1
