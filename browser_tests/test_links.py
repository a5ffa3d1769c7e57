"""Every internal link and anchor of each edition resolves; external links are
listed in artifacts/external-links.txt (English) and
artifacts/external-links.zh_CN.txt (Chinese), never fetched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import harness
import webcheck


def test_internal_links_and_anchors(
    edition_url: str,
    edition_site: Path,
    edition: str,
    artifacts: Path,
    record_external_count: Callable[[str, int, Path], None],
):
    """Crawl every page of the edition. Links into the other edition (the
    language switcher) are followed too: their target must be served and hold
    the anchor."""
    report = webcheck.check_links(edition_url, harness.discover_pages(edition_site))
    name = "external-links.txt" if edition == "en" else f"external-links.{edition}.txt"
    webcheck.write_external_links(report.external, artifacts / name)
    record_external_count(edition, len(report.external), artifacts / name)
    print(f"{len(report.external)} external links -> {artifacts / name}")
    assert report.problems == []
