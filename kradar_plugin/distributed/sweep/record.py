"""The checkpoint sweep's record: one entry per evaluated checkpoint (its metrics, or the error that stopped
it), kept in ``work_dir/sweep.json`` and rewritten after every checkpoint, so that what finished stays on
disk when the job dies and a restarted watcher skips what it has done.

An entry: ``checkpoint`` (absolute path), ``stem``, ``epoch`` (from the name, else the checkpoint's meta),
``size``/``mtime`` (the file evaluated), ``status`` ('ok' | 'failed'), ``stage`` of a failure ('load' |
'evaluate'), ``error``, ``metrics`` (every numeric metric), ``results_file``, ``loaded_fraction``,
``seconds``. Standard library only.
"""
import json
import os
import os.path as osp
import time

SWEEP_FILE = 'sweep.json'
VERSION = 1


class SweepRecord(object):
    """The entries of one sweep (see the module docstring), in the order evaluated."""

    def __init__(self, path=None, entries=None):
        self.path, self.entries = path, list(entries or [])

    @classmethod
    def load(cls, path):
        """The record at ``path`` (an empty one when the file does not exist)."""
        if not osp.isfile(path):
            return cls(path)
        with open(path) as f:
            data = json.load(f)
        return cls(path, data.get('checkpoints', []))

    def add(self, checkpoint, status, epoch=None, state=None, metrics=None, error=None, stage=None,
            results_file=None, loaded_fraction=None, seconds=None, evaluation=None):
        """Record one checkpoint (an earlier entry of the same file is replaced); returns the entry.
        ``evaluation``: what identifies the evaluation besides the weights (datasets, pipelines)."""
        entry = dict(checkpoint=checkpoint, stem=osp.splitext(osp.basename(checkpoint))[0], epoch=epoch,
                     size=state[0] if state else None, mtime=state[1] if state else None, status=status,
                     stage=stage, error=error, metrics=_numeric(metrics or {}), results_file=results_file,
                     loaded_fraction=loaded_fraction,
                     seconds=None if seconds is None else round(float(seconds), 3), evaluation=evaluation)
        self.entries = [e for e in self.entries if e['checkpoint'] != checkpoint] + [entry]
        return entry

    def is_done(self, checkpoint, state=None, evaluation=None):
        """True when ``checkpoint`` was evaluated successfully (with the same size and mtime, and the same
        ``evaluation``, if given)."""
        for entry in self.entries:
            if entry['checkpoint'] == checkpoint and entry['status'] == 'ok':
                return ((state is None or (entry['size'], entry['mtime']) == tuple(state)) and
                        (evaluation is None or entry.get('evaluation') == evaluation))
        return False

    def keep(self, checkpoints):
        """Only the entries of ``checkpoints`` (a resumed list: the plan's own)."""
        self.entries = [e for e in self.entries if e['checkpoint'] in set(checkpoints)]

    @property
    def ok(self):
        return [e for e in self.entries if e['status'] == 'ok']

    @property
    def failed(self):
        return [e for e in self.entries if e['status'] != 'ok']

    @property
    def all_succeeded(self):
        return bool(self.entries) and not self.failed

    def to_dict(self, summary=None, request=None):
        data = dict(version=VERSION, written=time.strftime('%Y-%m-%d %H:%M:%S'), checkpoints=self.entries,
                    evaluated=len(self.entries), failed=len(self.failed), all_succeeded=self.all_succeeded)
        if request is not None:
            data['request'] = request
        if summary is not None:
            data.update(summary)
        return data

    def save(self, summary=None, request=None):
        """Write the record atomically to its path; returns the path."""
        if not self.path:
            return None
        os.makedirs(osp.dirname(osp.abspath(self.path)), exist_ok=True)
        tmp = self.path + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(self.to_dict(summary, request), f, indent=2, sort_keys=False)
            f.write('\n')
        os.replace(tmp, self.path)
        return self.path


def _numeric(metrics):
    out = {}
    for key, value in metrics.items():
        if isinstance(value, bool):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        out[str(key)] = number
    return out
