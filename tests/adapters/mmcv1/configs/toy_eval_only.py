# The toy config switched to eval-only from the config file itself (no command-line flag).
_base_ = ['./toy.py']
runner = dict(constructor='EvalOnlyRunnerConstructor')
