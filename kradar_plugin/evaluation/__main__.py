"""``python -m kradar_plugin.evaluation``: the ``kradar-eval`` command."""
import sys

from .cli import main

sys.exit(main())
