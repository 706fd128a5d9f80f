"""`python -m olympus inspect FILE.py:FUNCTION ...` (see olympus.inspect_cli)."""

import sys

from olympus.inspect_cli import main

if __name__ == "__main__":
    sys.exit(main())
