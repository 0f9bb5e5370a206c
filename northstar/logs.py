"""Structured logs through structlog: context bound per run and step, secrets redacted.

Every log line passes ``redact_secrets`` last before rendering, so a secret value that
slipped into an event (a URL with a token, an error message) is replaced wherever it is.
Logs go to stderr; stdout belongs to the command's own output (step lines, JSON).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from contextvars import ContextVar
from typing import Any

import structlog

from northstar.redaction import redact_data

__all__ = ["EVENTS", "configure_logging", "redact_secrets", "secret_values"]

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


def configure_logging(*, json: bool = False, verbose: bool = False) -> None:
    """Configure structlog once, at the edge (the CLI); libraries only get loggers."""
    level = logging.DEBUG if verbose else logging.WARNING
    renderer: Any = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            redact_secrets,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
