"""Who configures log output: only the CLI; a program using the API sees only what it asks."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from northstar.logs import LIBRARY_LOGGER, configure_logging, library_logging


@pytest.fixture
def clean_root() -> Iterator[None]:
    """The root logger's handlers and level as they were before the test."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers, root.level = handlers, level


def test_library_events_go_to_stdlib_logging_and_print_nothing(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    library_logging()
    with caplog.at_level(logging.INFO, logger=LIBRARY_LOGGER):
        structlog.get_logger("northstar.run.execution").info("iteration_finished", iteration=1)
    assert capsys.readouterr() == ("", "")  # structlog's default would have printed to stdout
    (record,) = caplog.records
    assert record.name == "northstar.run.execution"
    assert "event='iteration_finished'" in record.getMessage()


def test_a_program_that_configured_structlog_keeps_its_configuration() -> None:
    processors = [structlog.processors.JSONRenderer()]
    structlog.configure(processors=processors)
    library_logging()
    assert structlog.get_config()["processors"] == processors


def test_log_json_renders_other_libraries_warnings_as_json(
    capsys: pytest.CaptureFixture[str], clean_root: None
) -> None:
    configure_logging(json=True)
    logging.getLogger("asyncio").warning("Task was destroyed but it is pending")
    structlog.get_logger("northstar.cli").error("command_failed", code="X")
    lines = capsys.readouterr().err.splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["event"] for e in events] == [
        "Task was destroyed but it is pending",
        "command_failed",
    ]
    assert events[0]["level"] == "warning"
