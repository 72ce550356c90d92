"""K-Radar's and EchoFusion's own file readers, run from fetched snapshots (nothing of theirs is kept in this
repository): the functions are read from the snapshot's source with ``ast`` and executed with numpy alone,
because their modules import torch, open3d, cv2, scipy and skimage at the top, which these functions never use.

- K-Radar (``$KRADAR_REPO``, default the ``fetch`` tool's path): ``KRadarDetection_v2_0.get_label``,
  ``get_calib_values`` and ``get_description`` of ``datasets/kradar_detection_v2_0.py``;
  ``read_imageset_file`` of ``utils/util_pipeline.py``; ``get_label_annos`` of
  ``utils/kitti_eval/kitti_common.py``.
- EchoFusion (``$KRADAR_ECHOFUSION_REPO``): ``get_label_anno``, ``get_calib_info`` and ``get_description`` of
  ``tools/kradar/kradar_data_utils.py``.
"""
import ast
import os
import os.path as osp
import pathlib
import re
import subprocess

import numpy as np

K_RADAR_SNAPSHOT = '/work/.mirror/kaist-avelab+K-Radar/repo'
ECHOFUSION_DEFAULT = '/work/.mirror/tusen-ai+EchoFusion/repo'


def _source(repo, name):
    if repo is None:
        return None
    if os.path.isfile(os.path.join(repo, name)):
        with open(os.path.join(repo, name)) as f:
            return f.read()
    try:
        return subprocess.check_output(['git', '--git-dir', repo, 'show', 'HEAD:' + name], stderr=subprocess.DEVNULL,
                                       universal_newlines=True)
    except (OSError, subprocess.CalledProcessError):
        return None


def _repo(env, default):
    path = os.environ.get(env, default)
    return path if os.path.isdir(path) else None


def kradar_repo():
    repo = _repo('KRADAR_REPO', K_RADAR_SNAPSHOT)
    return repo if _source(repo, 'datasets/kradar_detection_v2_0.py') else None


def echofusion_repo():
    repo = _repo('KRADAR_ECHOFUSION_REPO', ECHOFUSION_DEFAULT)
    return repo if _source(repo, 'tools/kradar/kradar_data_utils.py') else None


def _functions(source, names, namespace, cls=None):
    tree = ast.parse(source)
    body = tree.body
    if cls is not None:
        body = [n for n in body if isinstance(n, ast.ClassDef) and n.name == cls][0].body
    picked = [n for n in body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert sorted(n.name for n in picked) == sorted(names), 'snapshot changed: {}'.format(names)
    try:
        code = compile(ast.Module(body=picked, type_ignores=[]), '<snapshot>', 'exec')
    except TypeError:   # Python 3.7's ast.Module has no type_ignores
        code = compile(ast.Module(body=picked), '<snapshot>', 'exec')
    exec(code, namespace)
    return dict((n, namespace[n]) for n in names)


class _Attr(dict):
    __getattr__ = dict.__getitem__


def kradar_loader(label_version='v1_0', only_r=False, z_offset=0.7):
    """An object carrying K-Radar's own ``get_label`` / ``get_calib_values`` / ``get_description`` with the
    configuration attributes they read."""
    src = _source(kradar_repo(), 'datasets/kradar_detection_v2_0.py')
    fns = _functions(src, ['get_label', 'get_calib_values', 'get_description'], {'np': np, 'osp': osp, 'os': os},
                     cls='KRadarDetection_v2_0')
    loader = type('KRadarLoader', (object,), fns)()
    loader.label = _Attr(calib=True, onlyR=only_r, consider_cls=False, consider_roi=False, remove_0_obj=False)
    loader.label_version = label_version
    loader.item = _Attr(calib=True)
    loader.calib = _Attr(z_offset=z_offset)
    loader.roi = _Attr(xyz=[0, -15, -2, 72, 15, 7.6], check_azimuth_for_rdr=True, azimuth_deg=[-53, 53])
    return loader


def kradar_item(root, seq, label_paths):
    """K-Radar's ``dict_item`` of one frame (``label_paths``: {'v1_0': path, ...})."""
    meta = {'header': root, 'seq': seq}
    for version, path in label_paths.items():
        meta['label_' + version] = path
    return {'meta': meta}


def kradar_kitti():
    """K-Radar's ``get_label_annos`` (kitti_common) and ``read_imageset_file`` (util_pipeline)."""
    ns = {'np': np, 'pathlib': pathlib, 're': re}
    fns = _functions(_source(kradar_repo(), 'utils/kitti_eval/kitti_common.py'),
                     ['get_label_anno', 'get_label_annos', 'get_image_index_str'], ns)
    fns.update(_functions(_source(kradar_repo(), 'utils/util_pipeline.py'), ['read_imageset_file'], ns))
    return fns


def echofusion_readers():
    """EchoFusion's ``get_label_anno``, ``get_calib_info`` and ``get_description``."""
    return _functions(_source(echofusion_repo(), 'tools/kradar/kradar_data_utils.py'),
                      ['get_label_anno', 'get_calib_info', 'get_description'], {'np': np, 'osp': osp, 'os': os})


def echofusion_annos(label_path, calib_path, label_file):
    """EchoFusion's stored ``annos`` of one frame: ``get_label_anno``, then the calibration step of its
    ``get_kradar_image_info.map_func`` (``location += T @ R.T`` when the frame has objects; repeated here in
    two lines because it sits inside a function that also needs OpenCV), then ``label_file``."""
    fns = echofusion_readers()
    _, _, _, annos = fns['get_label_anno'](label_path)
    t = fns['get_calib_info'](calib_path)
    if annos['location'].shape[0] > 0:
        annos['location'] += t[None, :] @ np.array([[0, -1, 0], [0, 0, -1], [1, 0, 0]]).T
    annos['label_file'] = label_file
    return annos
