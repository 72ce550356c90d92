"""``python -m kradar_plugin.doctor``."""
import sys

from .cli import main

if __name__ == '__main__':
    sys.exit(main())
