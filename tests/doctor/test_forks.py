"""Maintained forks of the OpenMMLab packages (onedl-mmcv, onedl-mmengine, ...): distributions whose names differ
from the package they install. The doctor reports their versions, names the distribution, and judges them as the
package they replace; a fork next to the package it replaces is a conflict.

Real installs: small wheels of those names (the real forks' layouts: onedl-mmcv with a top_level.txt as
setuptools writes it, onedl-mmengine without one, as its hatchling wheel on PyPI) are built here, installed by pip
into a folder put first on ``PYTHONPATH``, and the real doctor runs there in a subprocess, as test_drift does.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile

import pytest

from kradar_plugin.doctor import environment, probes
from tests.launching import ROOT

from .helpers import judge, result


def _wheel(folder, dist, version, files, top_level=None):
    """A py3-none-any wheel of ``dist`` holding ``files`` {path: text}, with a valid RECORD."""
    stem = '%s-%s' % (dist.replace('-', '_'), version)
    info = stem + '.dist-info'
    members = dict(files)
    members[info + '/METADATA'] = 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' % (dist, version)
    members[info + '/WHEEL'] = 'Wheel-Version: 1.0\nGenerator: kradar-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n'
    if top_level:
        members[info + '/top_level.txt'] = top_level + '\n'
    rows = []
    for path, text in sorted(members.items()):
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
        rows.append('%s,sha256=%s,%d' % (path, digest, len(data)))
    members[info + '/RECORD'] = '\n'.join(rows + [info + '/RECORD,,']) + '\n'
    path = os.path.join(str(folder), stem + '-py3-none-any.whl')
    with zipfile.ZipFile(path, 'w') as z:
        for name, text in sorted(members.items()):
            z.writestr(name, text)
    return path


def _install(target, *wheels):
    proc = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-deps', '--no-index',
                           '--disable-pip-version-check', '--target', str(target)] + list(wheels),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    if proc.returncode != 0:
        pytest.skip('pip cannot install a local wheel here: ' + proc.stdout[-400:])
    return str(target)


def _doctor(*paths):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(list(paths) + [ROOT]), PYTHONWARNINGS='ignore',
               KRADAR_PLUGIN_REGISTER='0')
    report = subprocess.run([sys.executable, '-m', 'kradar_plugin.doctor', '--quick'], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    as_json = subprocess.run([sys.executable, '-m', 'kradar_plugin.doctor', '--quick', '--json'], env=env, cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert report.returncode in (0, 1) and 'Traceback' not in report.stderr, report.stderr
    doc = json.loads(as_json.stdout)
    assert doc['ok'] == (report.returncode == 0)
    return report.stdout, doc


def _upstream(*dists):
    """The distributions of ``dists`` installed in this interpreter itself (they stay visible to the doctor)."""
    try:
        from importlib import metadata  # novermin
    except ImportError:
        import importlib_metadata as metadata
    found = []
    for dist in dists:
        try:
            found.append('%s %s' % (dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            pass
    return found


@pytest.fixture(scope='module')
def onedl(tmp_path_factory):
    """onedl-mmcv 2.3.6 and onedl-mmengine 0.10.12 installed by pip into one folder."""
    tmp = tmp_path_factory.mktemp('onedl')
    mmcv = _wheel(tmp, 'onedl-mmcv', '2.3.6', {'mmcv/__init__.py': "__version__ = '2.3.6'\n",
                                               'mmcv/ops/__init__.py': ''}, top_level='mmcv')
    mmengine = _wheel(tmp, 'onedl-mmengine', '0.10.12', {'mmengine/__init__.py': "__version__ = '0.10.12'\n",
                                                         'mmengine/runner/__init__.py': ''})
    return _install(tmp / 'site', mmcv, mmengine)


def test_forks_are_reported_with_their_distribution_and_judged_as_the_package(onedl):
    text, doc = _doctor(onedl)
    facts = doc['facts']
    mmcv_upstream = _upstream('mmcv', 'mmcv-full', 'mmcv-lite')
    mmengine_upstream = _upstream('mmengine')
    if not mmcv_upstream:
        assert facts['mmcv'] == '2.3.6' and facts['providers']['mmcv'] == 'onedl-mmcv'
        assert 'mmcv 2.3.6 (onedl-mmcv)' in text
        assert 'not installed' not in [c for c in doc['checks'] if c['name'] == 'mmcv-full'][0]['reason']
    else:       # this interpreter has the package the fork replaces: both own the mmcv package
        owners = facts['package-owners']['mmcv']
        assert owners[0] == 'onedl-mmcv 2.3.6' and set(owners[1:]) == set(mmcv_upstream)
        assert doc['ok'] is False
    if not mmengine_upstream:
        assert facts['mmengine'] == '0.10.12' and facts['providers']['mmengine'] == 'onedl-mmengine'
        assert 'mmengine 0.10.12 (onedl-mmengine)' in text
    owner_check = [c for c in doc['checks'] if c['name'] == 'package-owners']
    assert owner_check and all(c['status'] in ('OK', 'FAIL') for c in owner_check)
    if not mmcv_upstream and not mmengine_upstream:
        assert owner_check[0]['status'] == 'OK' and 'mmcv 2.3.6 (onedl-mmcv)' in owner_check[0]['reason']


def test_a_fork_next_to_the_package_it_replaces_is_a_conflict(onedl, tmp_path):
    upstream = _install(tmp_path / 'upstream', _wheel(tmp_path, 'mmengine', '0.10.7', {
        'mmengine/__init__.py': "__version__ = '0.10.7'\n"}, top_level='mmengine'))
    text, doc = _doctor(onedl, upstream)
    assert doc['facts']['package-owners']['mmengine'] == ['onedl-mmengine 0.10.12', 'mmengine 0.10.7']
    assert doc['facts']['mmengine'] == '0.10.7'         # the upstream distribution's version, not mixed
    failed = [c for c in doc['checks'] if c['name'] == 'package-owners' and c['status'] == 'FAIL']
    assert any('the mmengine package is installed by onedl-mmengine 0.10.12 and mmengine 0.10.7' in c['reason']
               and c['fix'] == 'pip uninstall -y onedl-mmengine mmengine && pip install onedl-mmengine==0.10.12'
               for c in failed)
    assert 'FAIL  package-owners' in text and doc['ok'] is False


def test_providers_probe_reads_real_metadata(tmp_path, monkeypatch):
    """top_level.txt when there is one, else the RECORD's paths (the hatchling wheel of onedl-mmengine)."""
    target = _install(tmp_path / 'site', _wheel(tmp_path, 'onedl-mmengine', '0.10.12', {
        'mmengine/__init__.py': ''}), _wheel(tmp_path, 'onedl-mmcv-cu128-torch2-8', '2.3.1', {
            'mmcv/__init__.py': ''}, top_level='mmcv'))
    monkeypatch.syspath_prepend(target)
    if sys.version_info < (3, 8):
        pytest.importorskip('importlib_metadata')
    found = probes.probe_providers()
    assert ('onedl-mmengine', '0.10.12') in found['mmengine']
    assert ('onedl-mmcv-cu128-torch2-8', '2.3.1') in found['mmcv']


def test_fork_facts_judge_a_fork_as_the_package_it_replaces():
    facts = probes.fork_facts({}, {'mmcv': [('onedl-mmcv', '2.3.6')], 'mmseg': [('onedl-mmsegmentation', '1.4.2')]})
    assert facts == {'mmcv': '2.3.6', 'mmseg': '1.4.2', 'providers': {'mmcv': 'onedl-mmcv',
                                                                      'mmseg': 'onedl-mmsegmentation'},
                     'package-owners': {}}
    # a 1.x mmcv fork is the full build; next to upstream mmsegmentation, a fork is a conflict (not a version)
    facts = probes.fork_facts({'mmseg': '1.2.2'}, {'mmcv': [('mmcv-full-fork', '1.7.3')],
                                                   'mmseg': [('onedl-mmsegmentation', '1.4.2')]})
    assert facts['mmcv-full'] == '1.7.3' and 'mmseg' not in facts
    assert facts['package-owners'] == {'mmseg': ['onedl-mmsegmentation 1.4.2', 'mmsegmentation 1.2.2']}


def test_assumed_forks_are_judged_as_the_packages_they_replace():
    results = judge('onedl-mmcv=2.3.6,onedl-mmdetection=3.5.1,mmdet3d=1.4.0,onedl-mmengine=0.10.12,torch=2.8.0')
    assert result(results, 'package-owners').reason.startswith(
        'mmcv 2.3.6 (onedl-mmcv), mmdet 3.5.1 (onedl-mmdetection), mmengine 0.10.12 (onedl-mmengine)')
    assert result(results, 'mmcv-full').reason == 'mmcv 2.3.6 (onedl-mmcv): compatible'
    # mmdet3d 1.4.0 asserts mmcv < 2.2.0 and mmdet < 3.4.0 at import: the forks' versions are outside
    ranges = sorted(r.reason for r in results if r.name == 'mmcv-range')
    assert len(ranges) == 2 and all(r.startswith('mmdet3d 1.4.0 asserts') for r in ranges)
    assert "(mmcv 2.3.6 is onedl-mmcv's)" in ranges[0] and "(mmdet 3.5.1 is onedl-mmdetection's)" in ranges[1]
    # every onedl-mmengine release loads checkpoints under torch >= 2.6; upstream mmengine 0.10.7 does not
    assert result(results, 'mmengine-torch').status == 'OK'
    assert result(judge('mmengine=0.10.7,torch=2.8.0'), 'mmengine-torch').status == 'FAIL'
    # an assumed upstream package replaces a live fork of it
    live = {'mmcv': '2.3.6', 'providers': {'mmcv': 'onedl-mmcv'}, 'package-owners': {'mmcv': ['a', 'b']}}
    facts = environment.merge(live, environment.parse_assume('mmcv-full=1.7.0'))
    assert facts['providers'] == {} and facts['package-owners'] == {} and 'mmcv' not in facts
