"""The inline style and script of the HTML graph export (no library, no network).

They live beside this module as ``page.css`` and ``page.js`` and are inlined into every page. The
script reads the embedded JSON, runs a small force layout (pairwise repulsion, springs along
edges, a pull to the centre, cooling) and draws it in SVG. Every piece of user text is set with
``textContent`` or ``setAttribute`` on created elements, never parsed as HTML, so hostile names
show as text. Nodes can be dragged, the canvas panned and zoomed, nodes filtered by name, and a
click shows an entity's aliases and relations with their source messages.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["page_script", "page_style"]


@cache
def page_style() -> str:
    """The page's CSS."""
    return resources.files("sagewai.graph").joinpath("page.css").read_text(encoding="utf-8")


@cache
def page_script() -> str:
    """The page's JavaScript (self-written; no outside code)."""
    return resources.files("sagewai.graph").joinpath("page.js").read_text(encoding="utf-8")
