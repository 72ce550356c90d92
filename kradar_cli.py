"""Console-script entry points of kradar_plugin (``kradar-eval``, ``kradar-doctor``, ``kradar-create-data``).

``import kradar_plugin`` registers the mmcv/mmdet/mmdet3d adapters (importing torch and mmcv), which a
config's ``custom_imports`` needs and a command-line tool never does: it costs seconds and prints
framework warnings before ``--help``. This module lives outside the package, so the scripts can set
``KRADAR_PLUGIN_REGISTER=0`` before the package is imported; ``kradar-doctor`` then still inspects the
frameworks through its own probes.

    python -m kradar_cli eval ...      # the same as kradar-eval ...
    python -m kradar_cli doctor ...    # the same as kradar-doctor ...
    python -m kradar_cli create-data ...  # the same as kradar-create-data ...
"""
import os
import sys


def _no_registration():
    os.environ['KRADAR_PLUGIN_REGISTER'] = '0'


def eval_main(argv=None):
    """``kradar-eval``."""
    _no_registration()
    from kradar_plugin.evaluation.cli import main
    return main(argv)


def doctor_main(argv=None):
    """``kradar-doctor``."""
    _no_registration()
    from kradar_plugin.doctor.cli import main
    return main(argv)


def create_data_main(argv=None):
    """``kradar-create-data``."""
    _no_registration()
    from kradar_plugin.files.create_data import main
    return main(argv)


if __name__ == '__main__':  # pragma: no cover
    tools = {'eval': eval_main, 'doctor': doctor_main, 'create-data': create_data_main}
    if len(sys.argv) < 2 or sys.argv[1] not in tools:
        sys.stderr.write('usage: python -m kradar_cli {eval|doctor|create-data} [arguments]\n')
        sys.exit(2)
    sys.exit(tools[sys.argv[1]](sys.argv[2:]))
