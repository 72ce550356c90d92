"""Running K-Radar's (or 4DR-MR's) own evaluator on a job in a child process under numba's CUDA simulator, and
comparing its per-group AP with ours: one place for the official-evaluator tests."""
import json
import os
import pickle
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def run_official(job, tmp_path, snapshot, *flavour):
    """The JSON the official evaluator wrote for ``job`` (``_kradar_official.py``); skips when numba's CUDA
    simulator is unavailable."""
    in_path, out_path = str(tmp_path / 'job.pkl'), str(tmp_path / 'out.json')
    with open(in_path, 'wb') as f:
        pickle.dump(job, f)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM='1')
    proc = subprocess.run([sys.executable, os.path.join(HERE, '_kradar_official.py'), snapshot, in_path,
                           out_path] + list(flavour), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=1200)
    if proc.returncode != 0 and 'cuda' in proc.stderr.lower() and 'simulator' in proc.stderr.lower():
        pytest.skip('numba CUDA simulator unavailable: ' + proc.stderr[-300:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out_path) as f:
        return json.load(f)


def compare_group(entry, per_class, classes, where):
    """How many (class, metric, IoU) values of one group's official ``per_class`` results equal our group
    ``entry`` to 1e-6; a class without GT must be None on our side."""
    compared = 0
    for cls_index, values in per_class.items():
        cls = classes[int(cls_index)]
        for metric in ('bev', '3d'):
            for iou, value in zip(values['iou'], values[metric]):
                mine = entry['metrics']['{}/{}@{:g}'.format(cls, metric, iou)]
                if entry['gt'][cls] == 0:
                    assert mine is None
                    continue
                assert mine == pytest.approx(value, abs=1e-6), (where, cls, metric, iou)
                compared += 1
    return compared
