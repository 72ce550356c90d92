"""The one table of KRADAR_* switches: every variable the code reads is in it, it is read only through
kradar_plugin.settings, and docs/settings.md is its rendering."""
import os
import re

import pytest

from kradar_plugin import settings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# names that are output markers of the doctor's child processes or Python constants, not variables
NOT_VARIABLES = {'KRADAR_COMPILE_JSON', 'KRADAR_CUDA_COMPILE', 'KRADAR_DOCTOR_IMPORT', 'KRADAR_DOCTOR_IMPORT_BEGIN', 'KRADAR_DOCTOR_JSON',
                 'KRADAR_LOADER_PROBE', 'KRADAR_CLASSES', 'KRADAR_KEYWORDS'}


def _sources():
    for top in ('kradar_plugin', 'tools'):
        for base, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith('.py'):
                    path = os.path.join(base, name)
                    with open(path) as f:
                        yield os.path.relpath(path, ROOT), f.read()


def test_every_variable_in_the_code_is_in_the_table():
    named = set()
    for _, text in _sources():
        named.update(re.findall(r'\bKRADAR_[A-Z_]*[A-Z]\b', text))
    build_and_test = set(s.name for s in settings.BUILD_AND_TEST)
    assert named - NOT_VARIABLES - {'KRADAR_EVAL'} - build_and_test == set(settings.SETTINGS)


def test_build_and_test_variables_are_in_the_table():
    """Every KRADAR_* name the build scripts, the Makefile and the tests spell is a setting or a build/test
    variable of the table (or a marker / constant)."""
    known = set(settings.SETTINGS) | set(s.name for s in settings.BUILD_AND_TEST) | NOT_VARIABLES
    named = set()
    paths = [os.path.join(ROOT, 'Makefile')] + [os.path.join(ROOT, 'tools', n) for n in os.listdir(
        os.path.join(ROOT, 'tools')) if n.endswith('.sh')]
    for base, _, files in os.walk(os.path.join(ROOT, 'tests')):
        paths += [os.path.join(base, n) for n in files if n.endswith('.py')]
    for path in paths:
        with open(path) as f:
            named.update(re.findall(r'\bKRADAR_[A-Z_]*[A-Z]\b', f.read()))
    prefixes = set(n for n in named if any(k.startswith(n + '_') for k in known))   # 'KRADAR_EVAL', 'KRADAR_LOAD'
    unknown = sorted(named - known - prefixes - {'KRADAR_EVAL_ONLLY'})    # the misspelling test_settings checks
    assert unknown == [], unknown


def test_the_environment_is_read_in_one_place():
    readers = sorted(path for path, text in _sources()
                     if re.search(r"environ(\.get)?\(?\[?\s*['\"]KRADAR_", text)
                     and path != os.path.join('kradar_plugin', 'settings.py'))
    assert readers == []


def test_parsing_names_the_variable():
    env = {'KRADAR_EVAL_ONLY': ' Yes ', 'KRADAR_EVAL_FIRST': '0', 'KRADAR_PREFLIGHT': 'maybe',
           'KRADAR_EVAL_SAMPLES': '-3', 'KRADAR_EVAL_THREADS': '2'}
    assert settings.flag('KRADAR_EVAL_ONLY', env) is True
    assert settings.flag('KRADAR_EVAL_FIRST', env) is False
    assert settings.flag('KRADAR_PROBE_MODEL', env) is None
    assert settings.enabled('KRADAR_EVAL_ONLY', env) and not settings.enabled('KRADAR_EVAL_FIRST', env)
    assert settings.positive_int('KRADAR_EVAL_THREADS', env) == 2
    with pytest.raises(ValueError, match=r"KRADAR_PREFLIGHT='maybe'"):
        settings.flag('KRADAR_PREFLIGHT', env)
    with pytest.raises(ValueError, match=r"KRADAR_EVAL_SAMPLES='-3'"):
        settings.positive_int('KRADAR_EVAL_SAMPLES', env)
    with pytest.raises(KeyError, match='KRADAR_EVAL_ONLLY'):
        settings.raw('KRADAR_EVAL_ONLLY', env)


def test_docs_page_is_the_rendered_table():
    with open(os.path.join(ROOT, 'docs', 'settings.md')) as f:
        assert f.read() == settings.markdown()


def test_the_constants_are_written_out():
    """``settings.EVAL_ONLY == 'KRADAR_EVAL_ONLY'``, for every variable of both tables, as plain assignments
    (a linter sees them)."""
    with open(os.path.join(ROOT, 'kradar_plugin', 'settings.py')) as f:
        source = f.read()
    for s in settings.TABLE + settings.BUILD_AND_TEST:
        assert getattr(settings, s.name[len('KRADAR_'):]) == s.name
        assert "\n{} = '{}'\n".format(s.name[len('KRADAR_'):], s.name) in source, s.name
    assert 'globals()' not in source


def test_one_rule_for_a_requested_switch():
    """The registration and the runner adapters ask the same function whether a switch is requested (they
    once disagreed on KRADAR_MIN_LOADED=0, which turns the load check off)."""
    from kradar_plugin.runner_options import requested_switches
    cases = [({}, False), ({'KRADAR_EVAL_ONLY': '0'}, False), ({'KRADAR_EVAL_ONLY': '1'}, True),
             ({'KRADAR_MIN_LOADED': '0'}, True), ({'KRADAR_EVAL_SAMPLES': '4'}, True),
             ({'KRADAR_PREFLIGHT': 'off'}, False), ({'KRADAR_EVAL_FIRST': 'maybe'}, True),
             ({'KRADAR_EVAL_CHECKPOINTS': 'w/*.pth'}, True), ({'KRADAR_IOU_BACKEND': 'numpy'}, False)]
    for env, expected in cases:
        assert bool(requested_switches(env)) is expected, env
    for path in ('_registration.py', 'adapters/mmcv1/runner_builder.py', 'adapters/mmengine/runner_builder.py'):
        with open(os.path.join(ROOT, 'kradar_plugin', path)) as f:
            assert 'runner_options.requested_switches(' in f.read(), path
