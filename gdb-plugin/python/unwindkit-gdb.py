# unwindkit for GDB: unwinds frames from SFrame tables where GDB has no DWARF CFI.
#
#   (gdb) source /path/to/unwindkit-gdb.py
#
# This file sits next to the `unwindkit_gdb` package and the `_unwindkit` extension, in the
# build tree (build/<dir>/gdb-plugin/) and when installed (share/unwindkit/gdb/); it imports
# them from its own folder, so no PYTHONPATH is needed. Sourcing it twice is harmless.
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)

import unwindkit_gdb  # noqa: E402

unwindkit_gdb.install()
