#!/usr/bin/env python
"""mmdet3d-style data preparation entry: ``python tools/create_data.py kradar --root-path ROOT ...`` runs
``kradar-create-data`` with the remaining arguments (see ``kradar-create-data --help``)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != 'kradar':
        sys.stderr.write('usage: python tools/create_data.py kradar --root-path ROOT [ROOT ...] --out-dir OUT '
                         '--split-dir DIR [--label-version v1.0|v1.1|v2.0|v2.1] [...]\n')
        return 2
    sys.path.insert(0, ROOT)
    import kradar_cli
    return kradar_cli.create_data_main(argv[1:])


if __name__ == '__main__':
    sys.exit(main())
