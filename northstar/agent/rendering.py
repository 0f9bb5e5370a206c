"""Compact text of an observation for a model; it lives in ``northstar.monitor.rendering``.

The run engine renders a failing step's tab the same way for its diagnosis, and it may not
import the agent package, so the code moved below both; these names stay for the agent.
"""

from __future__ import annotations

from northstar.monitor.rendering import render_change_lines, render_changes, render_page

__all__ = ["render_change_lines", "render_changes", "render_page"]
