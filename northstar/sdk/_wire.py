"""The wire between a program and its host: environment names and one JSON line each way.

Request: ``{"id", "execution_id", "credential", "op", "args"}``; answer: ``{"id", "ok",
"result"}`` or ``{"id", "ok": false, "error": {"code", "message", "fix"}}``. Both sides
import this module, so the names are written once.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "CREDENTIAL_ENV",
    "EXECUTION_ENV",
    "ITERATION_ENV",
    "MAX_LINE",
    "SOCKET_ENV",
    "decode",
    "encode",
]

SOCKET_ENV = "NORTHSTAR_PROGRAM_SOCKET"
EXECUTION_ENV = "NORTHSTAR_EXECUTION_ID"
CREDENTIAL_ENV = "NORTHSTAR_PROGRAM_CREDENTIAL"
ITERATION_ENV = "NORTHSTAR_PROGRAM_ITERATION"
MAX_LINE = 8 * 1024 * 1024  # an observation of a big page fits; a runaway line does not


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message is a JSON object")
    return message
