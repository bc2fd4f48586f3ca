"""The bundle's entry point: the same launcher as the ``antinomy`` console script.

No arguments opens the window (or, without a display, runs the headless scan);
any argument runs the command line. ``antinomy hook EVENT`` is the agent hook
client (the venv's ``antinomy-hook``): a bundle has no interpreter to run its
file with, so the installed hook entries call the bundle itself.
"""

import multiprocessing
import sys


def run(argv: list[str]) -> int:
    if argv[:1] == ["hook"]:
        from desktop.service.hook import main as hook_main

        return hook_main(argv[1:])
    from desktop.ui.launcher import main

    return main(argv)


if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(run(sys.argv[1:]))
