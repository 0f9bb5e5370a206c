"""How every tool answers: structured content, or the CLI's one coded error line.

A tool returns a ``CallToolResult`` itself, so the SDK passes it through unchanged: the
answer's plain data is both the structured content and its compact JSON text (for hosts
that only read text). An answer that already is words for a model (an agent session's)
is ``told``: that text as the content, its fields as structured content. An expected
``NorthstarError`` is a tool error (``isError``) whose text is exactly the line the CLI
prints, ``error[CODE] where: message (fix: ...)``, with the same fields as structured
content; never a traceback. Anything else is left to the
SDK, which answers a crash with a generic error and keeps its text on the server.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

from mcp.types import CallToolResult, TextContent

from northstar.errors import NorthstarError, error_line

__all__ = ["answer", "answered", "error_line", "refusal", "told"]


def answer(data: dict[str, Any]) -> CallToolResult:
    text = json.dumps(data, separators=(",", ":"), default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def told(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def refusal(error: NorthstarError) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=error_line(error))],
        structured_content={"error": error.to_dict()},
        is_error=True,
    )


async def answered(work: Awaitable[dict[str, Any]]) -> CallToolResult:
    """Await a tool's work: its data as the answer, an expected error as a refusal."""
    try:
        return answer(await work)
    except NorthstarError as exc:
        return refusal(exc)
