"""The NOT_SENT rule and the batch's on-failure rule, as plain functions."""

from __future__ import annotations

from northstar.browser.protocol import SendTrace
from northstar.results import IterationResult, IterationState
from northstar.run.not_sent import not_sent
from northstar.run.repeat import may_go_past


def test_a_changing_request_means_it_may_have_been_sent_whatever_the_page_shows() -> None:
    assert not_sent(SendTrace(1, navigated=False, validation="Name: required"), "save") is None


def test_a_validation_message_with_nothing_sent_is_not_sent_and_names_the_message() -> None:
    error = not_sent(SendTrace(0, navigated=False, validation="Email: Please fill it"), "save")
    assert error is not None
    assert error.code == "NOT_SENT"
    assert "Email: Please fill it" in error.message


def test_a_page_that_stayed_with_nothing_sent_is_not_sent() -> None:
    assert not_sent(SendTrace(0, navigated=False), "save") is not None


def test_a_page_that_navigated_without_a_changing_request_is_left_unknown() -> None:
    assert not_sent(SendTrace(0, navigated=True), "save") is None


def _failed(code: str, state: IterationState = IterationState.FAILED) -> IterationResult:
    return IterationResult(2, state, reason_code=code)


def test_continue_goes_past_only_rows_that_failed_with_nothing_sent() -> None:
    assert may_go_past(_failed("NOT_SENT"), "continue")
    assert not may_go_past(_failed("NOT_SENT"), "stop")
    assert not may_go_past(_failed("EXPECTATION_FAILED"), "continue")
    assert not may_go_past(_failed("OUTCOME_UNKNOWN", IterationState.UNKNOWN), "continue")
