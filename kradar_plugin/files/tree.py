"""Where K-Radar's files are: sequence folders ``1``..``58`` spread over one or several dataset roots, and the
label folder of each version.

- v1.0: ``<root>/<seq>/info_label/<rdr>_<ldr64>.txt``
- v1.1: ``kradar_revised_label_v1_1/<seq>_info_label_revised/``
- v2.0: ``kradar_revised_label_v2_0/KRadar_refined_label_by_UWIPL/<seq>/``
- v2.1: ``kradar_revised_label_v2_1/KRadar_revised_visibility/<seq>/``

The revised labels ship as zip archives beside K-Radar's code (``tools/revise_label/``); ``labels_dir`` may be
the folder they were unzipped into, the archive's folder or its inner folder. Calibration and description
are read once per sequence.
"""
import os

from .calibration import read_calibration
from .description import read_description
from .errors import KRadarFileError
from .labels import normalize_version
from .splits import MAX_SEQUENCE_DIGITS

#: (archive folder, inner folder or None, sequence folder pattern) of the revised label versions
REVISED = {
    'v1.1': ('kradar_revised_label_v1_1', None, '{}_info_label_revised'),
    'v2.0': ('kradar_revised_label_v2_0', 'KRadar_refined_label_by_UWIPL', '{}'),
    'v2.1': ('kradar_revised_label_v2_1', 'KRadar_revised_visibility', '{}'),
}


class KRadarTree(object):
    """The dataset roots (sequence folders) and the label folder of ``label_version``."""

    def __init__(self, roots, label_version='v1.0', labels_dir=None):
        if isinstance(roots, str):
            roots = [roots]
        self.roots = [str(r) for r in roots]
        self.label_version = normalize_version(label_version)
        self.sequences = self._find_sequences()
        self.labels_base = self._labels_base(labels_dir)
        self._calib, self._desc, self._label_dirs = {}, {}, {}

    def _find_sequences(self):
        found = {}
        for root in self.roots:
            if not os.path.isdir(root):
                raise KRadarFileError(root, 'no such dataset root' if not os.path.exists(root) else
                                      'dataset root is not a folder')
            for name in (n for n in os.listdir(root) if n.isdigit()):
                if not os.path.isdir(os.path.join(root, name)):
                    raise KRadarFileError(os.path.join(root, name[:20]), 'named like a sequence folder but not a '
                                          'folder: move it out of the dataset root')
                if len(name) > MAX_SEQUENCE_DIGITS:
                    raise KRadarFileError(os.path.join(root, name[:20] + '...'), 'a folder named by {} digits is '
                                          'not a K-Radar sequence (1..58): move it out of the dataset '
                                          'root'.format(len(name)))
                seq = str(int(name))
                if seq in found:
                    raise KRadarFileError(os.path.join(root, name), 'sequence {} is also in {}: give each '
                                          'sequence once'.format(seq, found[seq][0]))
                found[seq] = (root, name)
        if not found:
            raise KRadarFileError(', '.join(self.roots), 'no sequence folder (1..58) in the dataset root(s)')
        return found

    def _labels_base(self, labels_dir):
        if self.label_version == 'v1.0':
            return None
        archive, inner, pattern = REVISED[self.label_version]
        starts = [labels_dir] if labels_dir else list(self.roots) + [os.path.join(r, '..') for r in self.roots]
        if labels_dir and not os.path.isdir(labels_dir):
            if os.path.isfile(labels_dir) and labels_dir.lower().endswith('.zip'):
                raise KRadarFileError(labels_dir, '--labels-dir is a zip archive: unzip it (unzip {} -d <folder>) '
                                      'and pass the folder'.format(os.path.basename(labels_dir)))
            raise KRadarFileError(labels_dir, 'no such labels folder' if not os.path.exists(labels_dir)
                                  else 'labels folder is not a folder')
        for start in starts:
            for cand in _candidates(start, archive, inner):
                if os.path.isdir(cand) and not self._is_dataset_root(cand) and any(
                        os.path.isdir(os.path.join(cand, pattern.format(s))) for s in self.sequences):
                    return cand
        where = labels_dir or ', '.join(self.roots)
        looked = 'in --labels-dir' if labels_dir else 'beside the dataset root(s) (no --labels-dir given)'
        raise KRadarFileError(where, '{} labels not found {}: expected {} with sequence folders ({}); unzip '
                              'K-Radar\'s tools/revise_label/{}.zip and pass its folder as --labels-dir'.format(
                                  self.label_version, looked, '/'.join(p for p in (archive, inner) if p),
                                  pattern.format('<seq>'), archive))

    def _is_dataset_root(self, folder):
        """A folder whose sequence folders hold ``info_label``: the dataset itself, never a revised-label
        folder (whose sequence folders are named alike for v2.0 and v2.1)."""
        return any(os.path.isdir(os.path.join(folder, name, 'info_label')) for name in os.listdir(folder)
                   if name.isdigit())

    def root_of(self, seq):
        """The folder of sequence ``seq``; KeyError-free: a missing sequence is a KRadarFileError."""
        try:
            root, name = self.sequences[str(seq)]
        except KeyError:
            raise KRadarFileError(', '.join(self.roots), 'sequence {} is in no dataset root'.format(seq))
        return os.path.join(root, name)

    def label_dir(self, seq):
        if self.label_version == 'v1.0':
            return os.path.join(self.root_of(seq), 'info_label')
        name = self.sequences[str(seq)][1] if str(seq) in self.sequences else seq
        return os.path.join(self.labels_base, REVISED[self.label_version][2].format(name))

    def label_path(self, seq, label):
        seq = str(seq)
        base = self._label_dirs.get(seq)
        if base is None:
            base = self._label_dirs[seq] = self.label_dir(seq) + os.sep
        return base + label

    def calibration(self, seq):
        seq = str(seq)
        if seq not in self._calib:
            self._calib[seq] = read_calibration(os.path.join(self.root_of(seq), 'info_calib', 'calib_radar_lidar.txt'))
        return self._calib[seq]

    def description(self, seq):
        seq = str(seq)
        if seq not in self._desc:
            self._desc[seq] = read_description(os.path.join(self.root_of(seq), 'description.txt'))
        return self._desc[seq]


def _candidates(start, archive, inner):
    out = [start, os.path.join(start, archive)]
    if inner:
        out += [os.path.join(start, archive, inner), os.path.join(start, inner),
                os.path.join(start, archive, archive, inner)]
    else:
        out.append(os.path.join(start, archive, archive))
    return out
