"""``python -m clwl.cli``: the same as ``clwl``."""

import sys

from clwl.cli import main

if __name__ == "__main__":
    sys.exit(main())
