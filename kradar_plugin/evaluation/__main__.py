"""``python -m kradar_plugin.evaluation``: the ``kradar-eval`` command.

Importing the package first registers the framework adapters (torch, mmcv, ...) when those are installed;
``python -m kradar_cli eval`` (what the ``kradar-eval`` script runs) skips that.
"""
import sys

from .cli import main

sys.exit(main())
