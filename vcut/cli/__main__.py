"""``python -m vcut.cli``: the same as the ``vcut`` command."""

import sys

from . import main

sys.exit(main())
