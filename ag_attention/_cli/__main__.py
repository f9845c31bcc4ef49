"""``python -m ag_attention._cli ...``: the ``ag-attention`` command (the tests run it so)."""

import sys

from . import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
