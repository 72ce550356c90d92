"""kradar_plugin: eval-only launches, a crash-proof rotated IoU, a fixed K-Radar evaluator and an
environment doctor for mmcv/mmdet/mmdet3d projects on the K-Radar 4D-radar dataset."""
import os

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def read_version():
    """``__version__`` of kradar_plugin/version.py, read as text (importing the package needs numpy): the
    version is defined there only."""
    with open(os.path.join(HERE, 'kradar_plugin', 'version.py')) as f:
        for line in f:
            if line.startswith('__version__'):
                return line.split('=', 1)[1].strip().strip("'\"")
    raise RuntimeError('kradar_plugin/version.py defines no __version__')


def read_requirements(name):
    with open(os.path.join(HERE, 'requirements', name)) as f:
        return [l.split('#')[0].strip() for l in f if l.split('#')[0].strip()]


setup(
    name='kradar_plugin',
    version=read_version(),
    description=__doc__,
    packages=find_packages(include=['kradar_plugin', 'kradar_plugin.*']),
    py_modules=['kradar_cli'],  # console-script shim: no framework registration for the CLIs
    python_requires='>=3.7',
    install_requires=read_requirements('runtime.txt'),
    extras_require={'tests': read_requirements('tests.txt'), 'numba': ['numba>=0.48']},
    entry_points={'console_scripts': [
        'kradar-eval=kradar_cli:eval_main',
        'kradar-doctor=kradar_cli:doctor_main',
        'kradar-create-data=kradar_cli:create_data_main',
    ]},
    zip_safe=False,
)
