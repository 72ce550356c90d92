"""``kradar-create-data --audit``: what a K-Radar tree holds, before converting it; writes nothing.

Per label version found (v1.0 in the sequence folders, the revised versions where ``--labels-dir`` or the
roots hold them): frames, objects per class, visibility values, yaw range, empty frames, every quirk of
:mod:`.quirks` and the files K-Radar's loader could not read either. Per sequence: a missing
``description.txt`` or calibration. Per split list: comments, duplicates, glued lines, frames whose label
file is missing, label files no list names, and frames in two lists. Blocking is what would make the
conversion with the same arguments fail; the exit status is 2 when something blocks, else 0.
"""
import collections
import json
import os
import sys

from .errors import KRadarFileError
from .labels import VERSIONS, read_label
from .quirks import MAX_VALUES, OTHER, Quirks, breakdown_text, cut
from .splits import count_overlaps, read_split, split_files
from .tree import KRadarTree

#: how many places of a problem a report keeps
FIRST = 20


def audit_tree(roots, split_dir=None, versions=None, labels_dir=None, sequences=None, progress=None):
    """The audit report (a JSON-ready dict) of the tree; ``progress()`` gives a bar (start/update/close)."""
    report = collections.OrderedDict(roots=list(roots), blocking=[])
    base = _tree(roots, 'v1.0', labels_dir, report)
    if base is None:
        return report
    seqs = sorted(base.sequences, key=int)
    if sequences is not None:
        seqs = [s for s in seqs if s in sequences]
    report['sequences'] = len(seqs)
    report['sequences_without'] = _sequence_files(base, seqs, report)
    lists, split_quirks = _splits(split_dir, sequences, report)
    found = []
    for version in (versions or VERSIONS):
        tree = base if version == 'v1.0' else _tree(roots, version, labels_dir, None)
        if tree is None or not any(os.path.isdir(tree.label_dir(s)) for s in seqs):
            if versions:
                report['blocking'].append('{} labels not found (give --labels-dir: the unzipped '
                                          'tools/revise_label archive of K-Radar)'.format(version))
            continue
        found.append(_version(tree, seqs, lists, progress))
    report['versions'] = found
    if not found:
        report['blocking'].append('no label file of any version in the sequence folders or the labels folder')
    listed = set(e.sequence for entries in (lists or {}).values() for e in entries)
    for kind, missing in report['sequences_without'].items():
        bad = [s for s in missing if s in listed] if lists is not None else []
        if bad:
            report['blocking'].append('{} sequence(s) a split list names have no readable {}: {}'.format(
                len(bad), kind, ', '.join(bad[:FIRST])))
    for entry in found:
        report['blocking'].extend('{}: {}'.format(entry['version'], b) for b in entry.pop('_blocking'))
    if split_quirks is not None:
        report['split_quirks'] = split_quirks.as_dict()
    return report


def _tree(roots, version, labels_dir, report):
    try:
        return KRadarTree(roots, version, labels_dir)
    except KRadarFileError as exc:
        if report is not None:
            report['blocking'].append(str(exc))
        return None


def _sequence_files(tree, seqs, report):
    """{'description.txt': [seq], 'calibration': [seq]} of the sequences whose file is missing or cannot be
    read (each read as the converter reads it: a FIFO or a malformed file is named in ``sequence_errors``)."""
    out = collections.OrderedDict([('description.txt', []), ('calibration', [])])
    errors = []
    for seq in seqs:
        for kind, read in (('description.txt', tree.description), ('calibration', tree.calibration)):
            try:
                read(seq)
            except KRadarFileError as exc:
                out[kind].append(seq)
                if not exc.problem.startswith('no such') and len(errors) < FIRST:
                    errors.append(str(exc))
    report['sequence_errors'] = errors
    return out


def _splits(split_dir, sequences, report):
    if not split_dir:
        return None, None
    quirks = Quirks()
    lists = collections.OrderedDict()
    info = report['splits'] = collections.OrderedDict()
    try:
        files = split_files(split_dir)
    except KRadarFileError as exc:
        report['blocking'].append(str(exc))
        return None, None
    for name, path in sorted(files.items()):
        try:
            lists[name] = read_split(path, sequences, quirks)
            info[name] = {'frames': len(lists[name])}
        except KRadarFileError as exc:
            info[name] = {'error': str(exc)}
            report['blocking'].append(str(exc))
    both = count_overlaps(lists, quirks)
    report['overlap'] = {'frames': len(both), 'first': [line for line, _ in both[:FIRST]]}
    return lists, quirks


def _version(tree, seqs, lists, progress):
    """The report of one label version: every label file of the sequences read as that version."""
    version = tree.label_version
    quirks = Quirks()
    classes, visibility = collections.Counter(), collections.Counter()
    yaw = [None, None]
    frames = objects = empty = 0
    errors, error_files = [], set()
    files = collections.OrderedDict()
    for seq in seqs:
        folder = tree.label_dir(seq)
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith('.txt') and not n.startswith('.'))
        except OSError:
            names = []
        files[seq] = names
    total = sum(len(v) for v in files.values())
    bar = progress() if progress is not None else None
    if bar is not None:
        bar.start(total, 'audit {}'.format(version))
    done = 0
    for seq, names in files.items():
        for name in names:
            try:
                label = read_label(tree.label_path(seq, name), version)
            except KRadarFileError as exc:
                error_files.add((seq, name))
                if len(errors) < FIRST:
                    errors.append(str(exc))
                continue
            finally:
                done += 1
                if bar is not None and done % 500 == 0:
                    bar.update(500)
            frames += 1
            objects += len(label.objects)
            if not label.objects:
                empty += 1
            for o in label.objects:
                classes[o.name] += 1
                visibility[o.avail] += 1
                yaw = [o.yaw_deg, o.yaw_deg] if yaw[0] is None else [min(yaw[0], o.yaw_deg), max(yaw[1], o.yaw_deg)]
            if label.quirks:
                quirks.add_file(seq + '/' + name, label.quirks)
    if bar is not None:
        bar.update(done % 500)
        bar.close()
    out = collections.OrderedDict([
        ('version', version), ('labels', tree.labels_base or 'the sequence folders (<seq>/info_label)'),
        ('files', total), ('frames', frames), ('objects', objects), ('empty_frames', empty),
        ('classes', _bounded(classes)), ('visibility', _bounded(visibility)),
        ('yaw_deg', yaw), ('unreadable', {'files': len(error_files), 'first': errors}),
        ('quirks', quirks.as_dict())])
    blocking = []
    if lists is not None:
        have = set((s, n) for s, names in files.items() for n in names)
        listed = set()
        missing, unreadable = [], []
        for name, entries in lists.items():
            for e in entries:
                key = (e.sequence, e.label)
                listed.add(key)
                if key not in have:
                    missing.append('{}.txt:{} {}'.format(name, e.number, e.line))
                elif key in error_files:
                    unreadable.append('{}.txt:{} {}'.format(name, e.number, e.line))
        unlisted = sorted(have - listed, key=lambda k: (int(k[0]), k[1]))
        out['split_files_missing'] = {'count': len(missing), 'first': missing[:FIRST]}
        out['unlisted_label_files'] = {'count': len(unlisted),
                                       'first': ['{}/{}'.format(*k) for k in unlisted[:FIRST]]}
        if missing:
            blocking.append('{} frame(s) the split lists name have no label file: {}'.format(
                len(missing), ', '.join(missing[:3])))
        if unreadable:
            blocking.append('{} frame(s) the split lists name cannot be read: {}'.format(
                len(unreadable), ', '.join(unreadable[:3])))
    elif error_files:
        blocking.append('{} label file(s) cannot be read'.format(len(error_files)))
    out['_blocking'] = blocking
    out['converts'] = not blocking
    return out


def _bounded(counter, most=MAX_VALUES):
    """{value: count} of the ``most`` most frequent values, the rest summed under OTHER: a tree of any number of
    odd class names gives a report of bounded size."""
    top = counter.most_common(most)
    out = collections.OrderedDict()
    for value, count in top:        # names cut short: a report line never quotes a long value
        out[cut(value)] = out.get(cut(value), 0) + count
    rest = sum(counter.values()) - sum(c for _, c in top)
    if rest:
        out[OTHER] = rest
    return out


def format_report(report):
    """The audit as text: one block per label version, then the splits and what blocks."""
    rows = ['K-Radar tree: {} ({} sequence(s))'.format(', '.join(report['roots']), report.get('sequences', 0))]
    for kind, seqs in report.get('sequences_without', {}).items():
        if seqs:
            rows.append('  sequences without a readable {}: {}'.format(kind, _first(seqs)))
    for error in report.get('sequence_errors', [])[:3]:
        rows.append('    ' + error)
    for v in report.get('versions', []):
        rows.append('')
        rows.append('labels {} ({}): {} files, {} frames, {} objects, {} empty frames{}'.format(
            v['version'], v['labels'], v['files'], v['frames'], v['objects'], v['empty_frames'],
            '' if v['converts'] else '  [does not convert]'))
        width = max([len(k) for k in v['classes']] + [10])
        rows.append('  {:<{w}} {:>8}'.format('class', 'objects', w=width))
        for name, count in v['classes'].items():
            rows.append('  {:<{w}} {:>8}'.format(name, count, w=width))
        rows.append('  visibility: {}'.format(', '.join('{} {}'.format(k, c) for k, c in v['visibility'].items())
                                              or '-'))
        if v['yaw_deg'][0] is not None:
            rows.append('  yaw: {:.1f} to {:.1f} degrees'.format(*v['yaw_deg']))
        for q in v['quirks'].values():
            rows.append('  quirk: {}'.format(_quirk_line(q)))
        if v['unreadable']['files']:
            rows.append('  unreadable: {} file(s); first: {}'.format(v['unreadable']['files'],
                                                                     v['unreadable']['first'][0]))
        for key, text in (('split_files_missing', 'frames the split lists name without a label file'),
                          ('unlisted_label_files', 'label files no split list names')):
            if key in v and v[key]['count']:
                rows.append('  {} {}: {}'.format(v[key]['count'], text, _first(v[key]['first'])))
    if 'splits' in report:
        rows.append('')
        rows.append('split lists: {}'.format(', '.join(
            '{}.txt {}'.format(n, s.get('frames', 'unreadable')) for n, s in report['splits'].items())))
        for q in report.get('split_quirks', {}).values():
            rows.append('  quirk: {}'.format(_quirk_line(q)))
    rows.append('')
    if report['blocking']:
        rows.append('blocks conversion:')
        rows.extend('  ' + b for b in report['blocking'])
    else:
        rows.append('nothing blocks conversion')
    return '\n'.join(rows) + '\n'


def _quirk_line(q):
    detail = ' [{}]'.format(breakdown_text(q['by_value'])) if q['by_value'] else ''
    return '{} {}{} ({}): {}'.format(q['count'], q['what'], detail, q['handling'], _first(q['first']))


def _first(items, n=3):
    return ', '.join(items[:n]) + (', ...' if len(items) > n else '')


def main_audit(args, bar_factory):
    """``kradar-create-data --audit``: print the report (text or ``--json``); 0, or 2 when something blocks."""
    progress = None if args.no_progress else bar_factory
    try:
        report = audit_tree(args.root_path, args.split_dir, [args.label_version] if args.label_version else None,
                            args.labels_dir, args.sequences, progress)
    except (KRadarFileError, ValueError, OSError) as exc:
        sys.stderr.write('kradar-create-data: error: {}\n'.format(exc))
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report, indent=1) + '\n')
    else:
        sys.stdout.write(format_report(report))
    return 2 if report['blocking'] else 0
