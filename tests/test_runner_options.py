"""The table of runner options: config values and the variables that override them, their errors naming the
source, the flags of the train entry points and the config keys they set."""
import argparse

import pytest

from kradar_plugin import runner_options, settings
from kradar_plugin.runner_options import resolve


def mode_and_samples(mode='only', samples=None, environ=None):
    options = resolve(dict(eval_mode=mode, eval_samples=samples), ('eval_mode', 'eval_samples'), environ or {})
    return options['eval_mode'], options['eval_samples']


def test_config_values_without_environment():
    assert mode_and_samples('only', None) == ('only', None)
    assert mode_and_samples('first', 5) == ('first', 5)
    assert mode_and_samples('off', None) == ('off', None)
    assert resolve({}, ('eval_mode',), {}, defaults=dict(eval_mode='off')) == dict(eval_mode='off')


def test_environment_overrides_config():
    assert mode_and_samples('off', None, {'KRADAR_EVAL_ONLY': '1'}) == ('only', None)
    assert mode_and_samples('off', None, {'KRADAR_EVAL_FIRST': 'true'}) == ('first', None)
    assert mode_and_samples('only', None, {'KRADAR_EVAL_ONLY': '0'}) == ('off', None)
    assert mode_and_samples('only', None, {'KRADAR_EVAL_ONLY': '0', 'KRADAR_EVAL_FIRST': '1'}) == ('first', None)
    assert mode_and_samples('first', None, {'KRADAR_EVAL_ONLY': '0'}) == ('first', None)
    assert mode_and_samples('only', 3, {'KRADAR_EVAL_SAMPLES': ' 12 '}) == ('only', 12)


def test_an_empty_variable_is_off_for_a_flag_and_unset_for_a_value():
    assert mode_and_samples('only', 3, {'KRADAR_EVAL_ONLY': '', 'KRADAR_EVAL_SAMPLES': ' '}) == ('off', 3)
    assert resolve(dict(eval_skip_bad=3), ('eval_skip_bad',), {'KRADAR_EVAL_SKIP_BAD': ''}) == dict(eval_skip_bad=None)
    assert resolve(dict(eval_key='k'), ('eval_key',), {'KRADAR_EVAL_KEY': ''}) == dict(eval_key='k')


def test_bad_values_name_the_source():
    with pytest.raises(ValueError, match='exclusive'):
        mode_and_samples('off', None, {'KRADAR_EVAL_ONLY': '1', 'KRADAR_EVAL_FIRST': '1'})
    with pytest.raises(ValueError, match=r"KRADAR_EVAL_ONLY='maybe': expected 1 or 0"):
        mode_and_samples('off', None, {'KRADAR_EVAL_ONLY': 'maybe'})
    with pytest.raises(ValueError, match=r"KRADAR_EVAL_SAMPLES='-2'"):
        mode_and_samples('off', None, {'KRADAR_EVAL_SAMPLES': '-2'})
    with pytest.raises(ValueError, match='eval_mode must be one of'):
        mode_and_samples('sometimes', None)
    with pytest.raises(ValueError, match='eval_samples=0'):
        mode_and_samples('only', 0)
    with pytest.raises(ValueError, match=r"runner.probe_model='maybe': expected True or False"):
        resolve(dict(probe_model='maybe'), ('probe_model',), {}, prefix='runner.')


def test_preflight_and_probe_model():
    assert resolve({}, ('preflight', 'probe_model'), {}) == dict(preflight='auto', probe_model=False)
    assert resolve(dict(preflight='true', probe_model=1), ('preflight', 'probe_model'), {}) == dict(
        preflight=True, probe_model=True)
    env = {'KRADAR_PREFLIGHT': 'off', 'KRADAR_PROBE_MODEL': 'yes'}
    assert resolve(dict(preflight=True), ('preflight', 'probe_model'), env) == dict(preflight=False, probe_model=True)


def test_resume_and_skip_settings():
    def inference(environ, **config):
        options = resolve(config, runner_options.INFERENCE, environ)
        return tuple(options[key] for key in runner_options.INFERENCE)
    assert inference({}) == (True, None, None)
    assert inference({}, eval_resume=False, eval_skip_bad='auto', eval_record_every=16) == (False, 'auto', 16)
    assert inference({}, eval_record_every='0') == (True, None, 0)
    env = {'KRADAR_EVAL_RESUME': '0', 'KRADAR_EVAL_SKIP_BAD': '5'}
    assert inference(env, eval_resume=True) == (False, 5, None)
    assert inference({'KRADAR_EVAL_SKIP_BAD': '0'}, eval_skip_bad=3)[1] is None
    with pytest.raises(ValueError, match='KRADAR_EVAL_SKIP_BAD'):
        inference({'KRADAR_EVAL_SKIP_BAD': 'many'})


@pytest.mark.parametrize('value,env,expected', [
    (None, None, 0.9), (0.5, None, 0.5), (0, None, 0.0), ('0.75', None, 0.75), (0.5, '0.95', 0.95),
    (None, '0', 0.0)])
def test_min_loaded_from_config_and_environment(value, env, expected):
    environ = {} if env is None else {settings.MIN_LOADED: env}
    assert resolve(dict(min_loaded=value), ('min_loaded',), environ) == dict(min_loaded=expected)


@pytest.mark.parametrize('value,env,message', [
    (90, None, 'runner.min_loaded=90: expected a fraction in [0, 1]'),
    ('most', None, "runner.min_loaded='most'"), (True, None, 'runner.min_loaded=True'),
    (None, '1.5', "KRADAR_MIN_LOADED='1.5'")])
def test_min_loaded_bad_values_name_their_source(value, env, message):
    environ = {} if env is None else {settings.MIN_LOADED: env}
    with pytest.raises(ValueError) as err:
        resolve(dict(min_loaded=value), ('min_loaded',), environ, prefix='runner.')
    assert message in str(err.value)


def test_requested_switches():
    assert not runner_options.requested_switches({})
    assert not runner_options.requested_switches({'KRADAR_EVAL_ONLY': '0'})
    assert runner_options.requested_switches({'KRADAR_EVAL_ONLY': '1'}) == ['KRADAR_EVAL_ONLY=1']
    assert runner_options.requested_switches({'KRADAR_EVAL_SAMPLES': '4'})


def test_every_variable_of_the_table_is_a_documented_setting_of_its_key():
    """settings.TABLE (docs/settings.md) says which config key each variable overrides: the table's."""
    variables = [name for option in runner_options.OPTIONS for name in option.variables]
    assert sorted(variables) == sorted(runner_options.SWITCHES) and len(set(variables)) == len(variables)
    for option in runner_options.OPTIONS:
        if option.variables:
            assert '`runner.{}`'.format(option.key) in settings.SETTINGS[option.variables[0]].meaning, option.key


def parser():
    return runner_options.add_arguments(argparse.ArgumentParser())


def test_flags_set_config_keys():
    args = parser().parse_args(['--eval-first', '--eval-samples', '7', '--no-resume', '--skip-bad-samples',
                                '--checkpoints', 'a.pth', 'w/*.pth', '--watch-idle', '30', '--sweep-stop-on-error'])
    assert runner_options.config_from_args(args) == dict(
        eval_mode='first', eval_samples=7, eval_resume=False, eval_skip_bad='auto',
        eval_checkpoints=['a.pth', 'w/*.pth'], eval_watch_idle=30.0, eval_stop_on_error=True)
    assert runner_options.config_from_args(parser().parse_args([])) == {}
    assert runner_options.config_from_args(parser().parse_args(['--eval-only', '--skip-bad-samples', '0'])) == dict(
        eval_mode='only', eval_skip_bad=None)


def test_flag_errors_name_the_flag():
    with pytest.raises(SystemExit):
        parser().parse_args(['--eval-only', '--eval-first'])
    with pytest.raises(ValueError, match=r"--skip-bad-samples='many': expected a number of samples"):
        runner_options.config_from_args(parser().parse_args(['--skip-bad-samples', 'many']))
    with pytest.raises(ValueError, match=r"--watch-idle=-1.0: expected a positive number of seconds"):
        runner_options.config_from_args(parser().parse_args(['--watch-idle', '-1']))


def test_sweep_flags_are_a_group_and_the_help_names_the_defaults():
    text = parser().format_help()
    body = text[text.index('\n\n'):]   # after the usage line
    assert body.index('--eval-samples') < body.index(runner_options.SWEEP_GROUP) < body.index('--checkpoints')
    assert 'new checkpoint (default 3600)' in ' '.join(text.split())
    assert 'directory (default 10)' in ' '.join(text.split())
