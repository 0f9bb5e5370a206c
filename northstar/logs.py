"""Structured logs through structlog: context bound per run and step, secrets redacted.

Every log line passes ``redact_secrets`` last before rendering, so a secret value that
slipped into an event (a URL with a token, an error message) is replaced wherever it is.
Only the CLI configures output (``configure_logging``): there, logs go to stderr and
stdout belongs to the command's own output (step lines, JSON); with ``--log-json`` every
stderr line is a JSON object. A program using the Python API gets no output from
Northstar: ``library_logging`` sends events to the standard library logger ``northstar``,
which has only a ``NullHandler`` (the library convention), so they show where the
program's own logging config says, and nowhere if it has none.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import Any

import structlog

from northstar.redaction import redact_data

__all__ = [
    "EVENTS",
    "LIBRARY_LOGGER",
    "configure_logging",
    "json_logging",
    "library_logging",
    "redact_secrets",
    "secret_values",
]

LIBRARY_LOGGER = "northstar"

# The catalogue of event names Northstar logs; one place to look them up.
EVENTS = frozenset(
    {
        "run_started",
        "run_finished",
        "iteration_started",
        "iteration_finished",
        "step_started",
        "step_finished",
        "interval_wait",
        "binding_checked",
        "stop_requested",
        "reconciled",
        "loop_signal",
        "loop_signal_cleared",
        "credential_not_saved",
        "screenshot_not_saved",
        "unexpected_error",
        "command_failed",
    }
)

secret_values: ContextVar[frozenset[str]] = ContextVar("northstar_secrets", default=frozenset())


def redact_secrets(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: replace the current run's secret values in every field."""
    secrets = secret_values.get()
    if not secrets:
        return event_dict
    return {k: redact_data(v, secrets) for k, v in event_dict.items()}


_json_output = False


def json_logging() -> bool:
    """Whether the CLI was asked for ``--log-json`` (then stderr carries JSON lines only)."""
    return _json_output


def library_logging() -> None:
    """Route events to stdlib logging, unless the program configured structlog itself.

    structlog's defaults print to stdout, which would mix Northstar's events into a
    script's own output; the stdlib logger ``northstar`` only shows what the script asks.
    """
    logging.getLogger(LIBRARY_LOGGER).addHandler(_NULL_HANDLER)  # adding it twice is a no-op
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.filter_by_level,
            redact_secrets,
            structlog.processors.KeyValueRenderer(key_order=["event"]),
        ],
        wrapper_class=structlog.stdlib.BoundLogger,
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )


_NULL_HANDLER = logging.NullHandler()


def configure_logging(*, json: bool = False, verbose: bool = False) -> None:
    """Configure structlog once, at the edge (the CLI); libraries only get loggers."""
    global _json_output
    _json_output = json
    level = logging.DEBUG if verbose else logging.WARNING
    renderer: Any = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[Any] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        redact_secrets,
    ]
    structlog.configure(
        processors=[structlog.contextvars.merge_contextvars, *shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    if json:  # warnings of other libraries (asyncio, ...) must be JSON lines too
        _json_stdlib_records(shared)


def _json_stdlib_records(shared: list[Any]) -> None:
    """Standard library records at WARNING and above, rendered as JSON lines on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processor=structlog.processors.JSONRenderer(), foreign_pre_chain=shared
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(logging.WARNING)
