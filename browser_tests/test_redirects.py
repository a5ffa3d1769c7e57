"""Old tutorial addresses (before the tutorials were renumbered) still work:
each leads the browser to the renumbered page, in the same edition, at the same
section (the #fragment is kept)."""

from __future__ import annotations

import re
from pathlib import Path

import harness
from playwright.sync_api import BrowserContext

# The tutorials' addresses as published before "01_one_training_step" came
# first: a fixed list, since links from outside the site point at them.
OLD = [
    "01_leaf_tensors",
    "02_grad_fn_and_the_graph",
    "03_detach_and_stopping_gradients",
    "04_in_place_and_views",
    "05_backward_of_non_scalars",
    "06_several_losses",
    "07_training_part_of_a_weight",
    "08_writing_a_custom_function",
    "09_testing_a_custom_function",
    "10_hooks",
    "11_non_differentiable_points",
    "12_higher_order_gradients",
    "13_forward_mode_and_torch_func",
    "14_memory_and_checkpointing",
    "15_torch_compile_and_autograd",
]


def test_every_old_address_leads_to_its_new_page(
    context: BrowserContext, edition_url: str, edition_site: Path
):
    found = harness.redirect_pages(edition_site)
    assert found == [f"tutorials/{name}.html" for name in OLD]
    page = context.new_page()
    for name in OLD:
        new = f"tutorials/{int(name[:2]) + 1:02d}{name[2:]}.html"
        # A section of the new page: a link into it must arrive there.
        html = (edition_site / new).read_text(encoding="utf-8")
        anchor = re.findall(r'<section id="([^"]+)"', html)[-1]
        response = page.goto(edition_url + f"tutorials/{name}.html#{anchor}")
        assert response is not None
        assert response.ok
        page.wait_for_url(re.compile(re.escape(f"{edition_url}{new}#{anchor}") + "$"))
        # It arrives at the real tutorial, in the same edition.
        assert page.locator(".sphx-glr-example-title").count() == 1
        assert page.locator(f"section[id='{anchor}']").count() == 1
    print(f"{len(OLD)} old addresses each lead to their renumbered page and section")
