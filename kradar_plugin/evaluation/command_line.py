"""The ``kradar-eval`` command line pieces the evaluator and the adapters build (quoted parts, excluded samples)."""


def shell_line(parts):
    """``parts`` as one shell command line, each quoted where the shell needs it."""
    import shlex
    return ' '.join(shlex.quote(str(p)) for p in parts)


def excluded_sidecar(results_path):
    """Where the samples left out of ``results_path`` are listed: ``<results>.excluded.json``."""
    return (results_path[:-4] if results_path.endswith('.pkl') else results_path) + '.excluded.json'


def write_excluded(results_path, excluded):
    """List the skipped samples beside the results (JSON, ``report.excluded_json``); returns its path."""
    import json
    from .report import excluded_json
    path = excluded_sidecar(results_path)
    with open(path, 'w') as f:
        json.dump(excluded_json(excluded), f, indent=1, sort_keys=True)
    return path


def read_excluded(path):
    """The skipped samples a ``--excluded-samples`` file lists (dicts with ``index``; ``identity`` as pairs)."""
    import json
    with open(path) as f:
        items = json.load(f)
    if not isinstance(items, list) or not all(isinstance(i, (int, dict)) for i in items):
        raise ValueError('--excluded-samples {!r}: expected a JSON list of dataset indices or of '
                         '{{"index": ...}} objects'.format(path))
    out = [dict(index=i) if isinstance(i, int) else dict(i) for i in items]
    for item in out:
        item['index'] = int(item['index'])
        item['identity'] = sorted((item.get('identity') or {}).items(), key=lambda kv: kv[0] != 'label_file')
    return sorted(out, key=lambda i: i['index'])
