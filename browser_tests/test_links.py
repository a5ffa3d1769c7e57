"""Every internal link and anchor of the served site resolves; external links
are listed in artifacts/external-links.txt, never fetched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import webcheck


def test_internal_links_and_anchors(
    base_url: str,
    site: Path,
    artifacts: Path,
    record_external_count: Callable[[int], None],
):
    report = webcheck.check_links(base_url, webcheck.discover_pages(site))
    webcheck.write_external_links(report.external, artifacts / "external-links.txt")
    record_external_count(len(report.external))
    print(f"{len(report.external)} external links -> {artifacts}/external-links.txt")
    assert report.problems == []
