"""The walk from a command to ``scan()``: which modules a whole-vault scan passes through
before the scan starts, and how often the path climbs back up the layers.

Traces every Python call in Antinomy's own packages from the entry point until
``desktop.flows.hunter.scan.scan`` is called, for the command line (``antinomy scan
--whole-vault``) on a copy of the sample vault with the shipped models. Counts:

* ``rooms`` — the distinct modules whose code ran;
* ``climbs`` — calls from a module into one of a *higher* layer (foundation < inference <
  desktop.vault < desktop.flows < desktop.service < desktop.ui, desktop.cli): a callback
  or a late import going back up;
* ``calls`` — calls from one module into another.

A callback handed down (the index reporting progress to the command's progress line) counts
as a climb: it is one, by design.

    python tests/perf/walk_scan.py [--json]

Prints JSON. The scan itself is not run: the walk stops where it would start.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LAYERS = (
    ("foundation", 0),
    ("inference", 1),
    ("desktop.vault", 2),
    ("desktop.resources", 2),
    ("desktop.flows", 3),
    ("desktop.service", 4),
    ("desktop.ui", 5),
    ("desktop.cli", 5),
)
TARGET = ("desktop.flows.hunter.scan", "scan")


class Reached(Exception):
    """The walk reached ``scan()``."""


def layer(module: str) -> int | None:
    for prefix, rank in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


class Walk:
    def __init__(self) -> None:
        self.rooms: list[str] = []
        self.calls: Counter[tuple[str, str]] = Counter()
        self.climbs: Counter[tuple[str, str]] = Counter()

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if layer(module) is None:
            return
        if module not in self.rooms:
            self.rooms.append(module)
        caller = frame.f_back
        while caller is not None and layer(caller.f_globals.get("__name__", "")) is None:
            caller = caller.f_back  # through the standard library and Qt
        if caller is not None:
            source = caller.f_globals["__name__"]
            if source != module:
                self.calls[(source, module)] += 1
                if (layer(module) or 0) > (layer(source) or 0):
                    self.climbs[(source, module)] += 1
        if (module, frame.f_code.co_name) == TARGET:
            raise Reached

    def report(self) -> dict[str, Any]:
        return {
            "rooms": len(self.rooms),
            "climbs": sum(self.climbs.values()),
            "calls": sum(self.calls.values()),
            "modules": self.rooms,
            "climbs_by_edge": {f"{a} -> {b}": n for (a, b), n in self.climbs.most_common()},
        }


def walk_cli(vault: Path) -> dict[str, Any]:
    from desktop.cli.main import main

    walk = Walk()
    sys.setprofile(walk)
    try:
        main(["scan", "--whole-vault", "--vault", str(vault)])
    except Reached:
        pass
    finally:
        sys.setprofile(None)
    return walk.report()


def main() -> None:
    from desktop.resources import ensure_sample_vault

    tmp = Path(tempfile.mkdtemp(prefix="antinomy-walk-"))
    try:
        vault = ensure_sample_vault(tmp / "sample")
        os.environ["ANTINOMY_HOME"] = str(tmp / "home")
        result = {"cli": walk_cli(vault)}
        print(json.dumps(result, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
