"""Exit codes of the command line (sysexits-style, stable for scripts)."""

from __future__ import annotations

OK = 0
#: Something failed that is not one of the cases below.
FAILURE = 1
#: Bad command-line usage (argparse uses 2 as well).
USAGE = 2
#: Bad input data (a file that is not what it should be).
DATA_ERROR = 65
#: A model or backend is unavailable (missing, corrupted, unreachable).
UNAVAILABLE = 69
#: The vault changed under us, or it is busy; trying again may work.
TEMP_FAILURE = 75
#: Stopped by the user (Ctrl-C).
INTERRUPTED = 130
