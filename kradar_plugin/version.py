"""The package version, defined here only (``kradar_plugin.__version__``, setup.py, the CLIs' --version)."""
__version__ = '0.1.0'
