"""How a notebook shows :class:`.GraphHtml`: the view where it may run, text elsewhere.

A trusted output (the cell run here, or a trusted notebook, or a page of the
site) shows the view in a sandboxed ``iframe``; ``<style>`` hides the rest.
An untrusted notebook (saved with its outputs and reopened, or shared) and
GitHub's preview drop ``<script>``, ``<style>``, ``<iframe>`` and ``<svg>``
(keeping the text inside an ``<svg>``): what stays is the hint line and the
graph as :func:`.format_graph` prints it. The static SVG for print is an
``<img hidden>``, so it leaves no text behind. The frame's colour scheme
follows the page's theme (JupyterLab, the site's theme, VS Code), and the
view says how tall it wants to be (``postMessage``, a number); the small
script in the output sets the frame's height from it and tells the view
the theme.
"""

from __future__ import annotations

import base64
import html

from autograd_notes.labels import Names
from autograd_notes.text import tree_lines
from autograd_notes.view import View

# A trusted output hides the fallback: only where <style> is dropped does it show.
HINT = (
    "The interactive view shows when this cell runs, or once the notebook is "
    "trusted; here is the graph as text:"
)
_DARK = (
    'body[data-jp-theme-light="false"]',  # JupyterLab, Notebook 7
    'html[data-theme="dark"]',  # the site (pydata-sphinx-theme)
    "body.vscode-dark",
)
_LIGHT = (
    'body[data-jp-theme-light="true"]',
    'html[data-theme="light"]',
    "body.vscode-light",
)
_STYLE = (
    ".autograd-notes-static,.autograd-notes-fallback{display:none}"
    ".autograd-notes-static{max-width:100%;height:auto}"
    "@media print{.autograd-notes-frame{display:none!important}"
    ".autograd-notes-static{display:block!important}}"
    + ",".join(f"{s} .autograd-notes-frame" for s in _DARK)
    + "{color-scheme:dark}"
    + ",".join(f"{s} .autograd-notes-frame" for s in _LIGHT)
    + "{color-scheme:light}"
)
# Beside the frame (a trusted output runs it): the height the view asks for
# (view.js posts it after each draw), from its own frame only, as a number:
# at least 240 px, at most 90% of the window (600 px if that is less); the
# first answer sets it, later ones only grow it. In reply, and whenever the
# page's theme changes, the frame's color-scheme (set by _STYLE from the
# theme) is posted to the view: a frame without allow-same-origin cannot
# read its parent, and Chromium's prefers-color-scheme inside it does not
# follow the frame's color-scheme.
_SCRIPT = (
    "(function(){var s=document.currentScript,f=s&&s.parentNode.querySelector("
    '"iframe.autograd-notes-frame"),set=0,o;if(!f)return;'
    "function tell(){if(!f.isConnected){o.disconnect();return;}"
    "var c=getComputedStyle(f).colorScheme;"
    'if(f.contentWindow&&(c==="dark"||c==="light"))'
    'f.contentWindow.postMessage({"autograd-notes-scheme":c},"*");}'
    "o=new MutationObserver(tell);"
    "[document.documentElement,document.body].forEach(function(n){"
    "o.observe(n,{attributes:true});});"
    'addEventListener("message",function(e){'
    'var h=e.data&&e.data["autograd-notes-height"];'
    'if(e.source!==f.contentWindow||typeof h!=="number"||!(h>0))return;'
    "h=Math.round(Math.min(Math.max(h,240),Math.max(600,innerHeight*.9)));"
    'if(!set||h>f.offsetHeight)f.style.height=h+"px";set=1;tell();});})();'
)


# The text shows at most this many lines of the tree (a notebook's output).
MOST_LINES = 300


def graph_text(view: View, names: Names) -> str:
    """The tree :func:`.format_graph` prints for ``view``, cut at ``MOST_LINES``."""
    lines = tree_lines(view, names, most=MOST_LINES + 1)
    if len(lines) > MOST_LINES:
        lines[MOST_LINES:] = [
            f"... (the first {MOST_LINES} lines: format_graph prints all)"
        ]
    return "\n".join(lines)


def notebook_html(page: str, svg: str, text: str) -> str:
    """The output: the frame, the print image, the text fallback, the sizing script.

    ``svg`` is the standalone image (with its namespace), ``text`` the tree.
    """
    picture = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (
        f'<div class="autograd-notes-view"><style>{_STYLE}</style>'
        f'<iframe class="autograd-notes-frame" srcdoc="{html.escape(page)}" '
        'sandbox="allow-scripts" '
        'style="width:100%;height:600px;border:1px solid #8888" '
        'title="backward graph"></iframe>'
        f'<img class="autograd-notes-static" hidden style="display:none" '
        'alt="backward graph, top level" '
        f'src="data:image/svg+xml;base64,{picture}">'
        f'<div class="autograd-notes-fallback"><p>{html.escape(HINT)}</p>'
        f"<pre>{html.escape(text)}</pre></div>"
        f"<script>{_SCRIPT}</script></div>"
    )
