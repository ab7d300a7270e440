"""``python -m robustbnn``: the same command line as ``robustbnn``."""

import sys

from robustbnn.cli import main

if __name__ == "__main__":
    sys.exit(main())
