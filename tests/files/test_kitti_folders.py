"""``kradar-eval --kitti-dir``: K-Radar's prediction folders parsed as K-Radar's ``get_label_annos`` parses
them, paired by file name, and scored per condition as K-Radar's ``eval.py`` / ``eval_revised.py`` score its
``validate_kitti_conditional`` folders (K-Radar's code from the snapshot)."""
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from kradar_plugin.evaluation.cli import main as eval_main
from kradar_plugin.files.kitti_folders import read_folder

from . import _kitti_writer as writer
from . import _snapshots as snap

HERE = os.path.dirname(os.path.abspath(__file__))
need_kradar = pytest.mark.skipif(snap.kradar_repo() is None, reason='no K-Radar snapshot (KRADAR_REPO)')


def frame_annos(data, offsets):
    """Per-frame annotation dicts (K-Radar's ``get_label_annos`` list) of a side's columns."""
    return [dict((k, v[int(offsets[f]):int(offsets[f + 1])]) for k, v in data.items())
            for f in range(len(offsets) - 1)]


@pytest.fixture(scope='module')
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp('kitti')
    frames = writer.random_frames(66, seed=3)
    return {'frames': frames, 'plain': writer.write_folders(str(root / 'plain'), frames),
            'conditional': writer.write_folders(str(root / 'cond'), frames, conditional=True)}


@need_kradar
@pytest.mark.parametrize('layout', ['plain', 'conditional'])
def test_parsed_as_kradar_parses(folders, layout):
    kitti = snap.kradar_kitti()
    folder = read_folder(folders[layout])
    sub = ('pred', 'gt') if layout == 'plain' else (os.path.join('all', 'preds'), os.path.join('all', 'gts'))
    base = folders[layout]
    ids = kitti['read_imageset_file'](os.path.join(base, 'val.txt') if layout == 'plain' else
                                      os.path.join(base, 'all', 'val.txt'))
    assert folder.ids == ids
    theirs = {'dt': kitti['get_label_annos'](os.path.join(base, sub[0])),
              'gt': kitti['get_label_annos'](os.path.join(base, sub[1]), ids)}
    for side in ('gt', 'dt'):
        mine = frame_annos(*getattr(folder, side))
        assert len(mine) == len(theirs[side]) == len(ids)
        for m, t in zip(mine, theirs[side]):
            for key in t:
                assert np.array_equal(m[key], np.asarray(t[key]).reshape(m[key].shape)), (side, key)
    assert folder.conditions[0] == dict(zip(('road_type', 'capture_time', 'climate'),
                                            folders['frames'][ids[0]]['desc']))


def _cli(args, capsys):
    rc = eval_main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_pairing_by_name_and_errors_naming_both(folders, tmp_path, capsys):
    import shutil
    base = str(tmp_path / 'c')
    shutil.copytree(folders['plain'], base)
    ids = read_folder(base).ids
    os.remove(os.path.join(base, 'pred', '{:06d}.txt'.format(ids[3])))
    rc, _, err = _cli(['--kitti-dir', base], capsys)
    assert rc == 2 and err.count('\n') == 1 and 'GT without prediction' in err
    assert os.path.join(base, 'gt', '{:06d}.txt'.format(ids[3])) in err and os.path.join(
        base, 'pred', '{:06d}.txt'.format(ids[3])) in err
    with open(os.path.join(base, 'pred', '{:06d}.txt'.format(ids[3])), 'w') as f:
        f.write(writer.DUMMY + '\n')
    with open(os.path.join(base, 'pred', '999999.txt'), 'w') as f:
        f.write(writer.DUMMY + '\n')
    rc, _, err = _cli(['--kitti-dir', base], capsys)
    assert rc == 2 and 'prediction without GT' in err and '999999.txt' in err and 'val.txt' in err
    os.remove(os.path.join(base, 'pred', '999999.txt'))
    with open(os.path.join(base, 'gt', '{:06d}.txt'.format(ids[1])), 'a') as f:
        f.write('sed 0.00 0 0 50 50 150 150 1.5 1.8 abc 1 2 3 0.1\n')
    rc, _, err = _cli(['--kitti-dir', base], capsys)
    assert rc == 2 and "field l = 'abc'" in err and '{:06d}.txt'.format(ids[1]) in err
    epoch = str(tmp_path / 'epoch')
    os.makedirs(epoch)
    for conf in ('0.3', '0.5'):
        shutil.copytree(folders['plain'], os.path.join(epoch, conf))
    rc, _, err = _cli(['--kitti-dir', epoch], capsys)
    assert rc == 2 and 'confidence thresholds (0.3, 0.5)' in err
    assert read_folder(os.path.dirname(folders['plain'])).ids == read_folder(folders['plain']).ids   # one: used


def test_frames_paired_by_name_not_order(folders, tmp_path, capsys):
    """val.txt in another order gives the same numbers: frames pair by file name (K-Radar pairs by order)."""
    import shutil
    base = str(tmp_path / 'r')
    shutil.copytree(folders['plain'], base)
    rc, first, _ = _cli(['--kitti-dir', base, '--protocol', 'kradar', '--classes', 'Sedan'], capsys)
    with open(os.path.join(base, 'val.txt')) as f:
        lines = f.read().split()
    with open(os.path.join(base, 'val.txt'), 'w') as f:
        f.write('\n'.join(reversed(lines)) + '\n')
    rc2, second, _ = _cli(['--kitti-dir', base, '--protocol', 'kradar', '--classes', 'Sedan'], capsys)
    assert rc == rc2 == 0 and first == second and 'Sedan' in first


@need_kradar
@pytest.mark.slow
def test_conditions_equal_kradar_eval_py_and_eval_revised_py(folders, tmp_path, capsys):
    """Every condition folder K-Radar wrote, evaluated by K-Radar's code as validate_kitti_conditional does,
    against our groups from the same <conf> folder."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'evaluation'))
    from _kradar_official import snapshot_path
    kitti = snap.kradar_kitti()
    base = folders['conditional']
    job = {'groups': {}, 'classes': [0, 1]}
    names = {'all': 'total'}
    for cond in sorted(os.listdir(base)):
        if not os.path.isdir(os.path.join(base, cond)):
            continue
        ids = kitti['read_imageset_file'](os.path.join(base, cond, 'val.txt'))
        if len(ids) < 10:
            continue
        group = names.get(cond) or ('weather/' if cond in ('normal', 'fog', 'rain', 'sleet') else
                                    'road/' if cond in ('urban', 'highway') else 'time/') + cond
        # K-Radar's own parsing of each condition folder: predictions of every file, GT of val.txt's ids
        job['groups'][group] = (kitti['get_label_annos'](os.path.join(base, cond, 'gts'), ids),
                                kitti['get_label_annos'](os.path.join(base, cond, 'preds')))
    assert {'total', 'weather/fog', 'road/urban', 'time/night'} <= set(job['groups'])
    in_path, out_path = str(tmp_path / 'job.pkl'), str(tmp_path / 'out.json')
    with open(in_path, 'wb') as f:
        pickle.dump(job, f)
    proc = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), 'evaluation', '_kradar_official.py'),
                           snapshot_path(), in_path, out_path], env=dict(os.environ, NUMBA_ENABLE_CUDASIM='1'),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=1200)
    if proc.returncode != 0 and 'simulator' in proc.stderr.lower():
        pytest.skip('numba CUDA simulator unavailable: ' + proc.stderr[-300:])
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out_path) as f:
        official = json.load(f)
    json_path = str(tmp_path / 'ours.json')
    rc, _, err = _cli(['--kitti-dir', base, '--protocol', 'all', '--classes', 'Sedan', 'Bus or Truck',
                       '--eval-types', 'bev', '3d', '--iou-mode', 'all', '--json', json_path], capsys)
    assert rc == 0, err
    with open(json_path) as f:
        ours = json.load(f)['groups']
    compared = 0
    for tag, protocol in (('eval', 'kradar'), ('revised', 'revised')):
        for group, per_class in official[tag].items():
            entry = ours[protocol][group]
            for cls_index, values in per_class.items():
                cls = ['Sedan', 'Bus or Truck'][int(cls_index)]
                for metric in ('bev', '3d'):
                    for iou, value in zip(values['iou'], values[metric]):
                        mine = entry['metrics']['{}/{}@{:g}'.format(cls, metric, iou)]
                        assert mine == pytest.approx(value, abs=1e-6), (tag, group, cls, metric, iou)
                        compared += 1
    assert compared >= 2 * 4 * 2 * 2 * 3
