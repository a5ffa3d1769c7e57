"""The site translates every graph drawing's description (its alt text) into
Chinese: docs/_ext/autograd_site/figures.py, on random graphs drawn by draw_graph."""

from __future__ import annotations

import re

import matplotlib
import torch
from autograd_site.figures import describe_in
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograd_notes import draw_graph

from ..package.test_drawing import graphs

matplotlib.use("agg")
import matplotlib.pyplot as plt


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.booleans())
def test_every_description_translates(root: torch.Tensor, collapse: bool) -> None:
    fig = draw_graph(root, collapse=collapse)
    description = fig.axes[0].get_label()
    chinese = describe_in("zh_CN", description)
    names = {t.get_text().split("\n")[0] for t in fig.axes[0].texts}
    left = re.sub("|".join(map(re.escape, sorted(names, key=len)[::-1])), "", chinese)
    assert re.search("[A-Za-z]", left) is None, chinese
    plt.close(fig)
