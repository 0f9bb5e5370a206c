"""How every tool answers: structured content, or the CLI's one coded error line.

A tool returns a ``CallToolResult`` itself, so the SDK passes it through unchanged: the
answer's plain data is both the structured content and its compact JSON text (for hosts
that only read text). An answer that already is words for a model (an agent session's)
is ``told``: that text as the content, its other fields as structured content (the
observation's text travels once, in the content: the MCP spec's alternative of a JSON
copy of the structured content would carry every observation twice). An expected
``NorthstarError`` is a tool error (``isError``) whose text is exactly the line the CLI
prints, ``error[CODE] where: message (fix: ...)``, with the same fields as structured
content (no string of it longer than ~500 characters: an input it quotes may be huge);
never a traceback. Anything else is left to the
SDK, which answers a crash with a generic error and keeps its text on the server.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

from mcp.types import CallToolResult, TextContent

from northstar.errors import NorthstarError, error_line

__all__ = ["MAX_REPEATED", "answer", "answered", "capped", "error_line", "refusal", "told"]


def answer(data: dict[str, Any]) -> CallToolResult:
    text = json.dumps(data, separators=(",", ":"), default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def told(text: str, data: dict[str, Any]) -> CallToolResult:
    """Words for a model as the content; the fields, without the words, as structured
    content: an observation's text (``text``, also inside ``page``) travels once."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=_without_text(data)
    )


def _without_text(data: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _without_text(value) if isinstance(value, dict) else value
        for key, value in data.items()
        if key != "text"
    }


MAX_REPEATED = 500  # characters of one string an error answer repeats; an input may be huge


def capped(text: str) -> str:
    """``text``, or its first ``MAX_REPEATED`` characters and how many were left out."""
    if len(text) <= MAX_REPEATED + 100:
        return text
    return f"{text[:MAX_REPEATED]}… ({len(text) - MAX_REPEATED} more characters not repeated)"


def _capped_fields(value: Any) -> Any:
    if isinstance(value, str):
        return capped(value)
    if isinstance(value, dict):
        return {key: _capped_fields(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_capped_fields(item) for item in value]
    return value


def _capped_line(error: NorthstarError) -> str:
    """The CLI's line with its message cut short, its code and fix kept whole."""
    return error_line(error).replace(error.message, capped(error.message), 1)


def refusal(error: NorthstarError) -> CallToolResult:
    """The coded line and the error's fields; a long input quoted in them is cut short."""
    return CallToolResult(
        content=[TextContent(type="text", text=_capped_line(error))],
        structured_content={"error": _capped_fields(error.to_dict())},
        is_error=True,
    )


async def answered(work: Awaitable[dict[str, Any]]) -> CallToolResult:
    """Await a tool's work: its data as the answer, an expected error as a refusal."""
    try:
        return answer(await work)
    except NorthstarError as exc:
        return refusal(exc)
