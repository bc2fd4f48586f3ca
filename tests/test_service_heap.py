"""``antinomy serve`` hands back the heap that loading freed (glibc keeps it otherwise):
measured idle 813 → 561 MiB after a first start, 585 → 521 MiB after a later one."""

from __future__ import annotations

import sys

import pytest

from desktop.service.heap import return_freed_heap
from tests.service_util import rss_mib

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")


def test_freed_heap_goes_back_to_the_system() -> None:
    # 1 KB blocks come from malloc's heap; keeping one in 64 alive pins the heap's top, so
    # freeing the rest returns nothing by itself — as after loading the engines.
    blocks = [bytes(1000 + i % 7) for i in range(300_000)]
    kept = blocks[::64]
    del blocks
    before = rss_mib()
    assert return_freed_heap() is True
    after = rss_mib()
    assert len(kept) > 4000
    assert before - after > 150, (before, after)  # ~290 MB were freed, nearly all come back
