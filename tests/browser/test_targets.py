"""Targets match whole names, every action says what it acted on, a bad select fails fast.

The decoy page (``/decoy``) is the case users met: the order button was renamed from
"Submit" to "Place order" and an unrelated "Submit feedback" button stayed, each form
counted apart by the fixture site. A substring match for "Submit" now finds the feedback
button; the default exact match finds nothing and sends nothing.
"""

from __future__ import annotations

import pytest

from browser_adapters.acted_on import ActedOn, SelectChoices
from fixtures.site_server import FixtureSite
from northstar.results import IterationResult, IterationState
from tests.browser.conftest import EVENT_MS, FAIL_FAST_MS, LOADED, RunText, last_step, recipe

pytestmark = pytest.mark.browser


def order(click: str, *, extra: str = "", timeout: int = EVENT_MS) -> str:
    """The decoy page: type an item, then submit with the given click target.

    ``timeout`` bounds the submit step: ``FAIL_FAST_MS`` where the target is meant to be
    missing, the generous default where the click must land and the page answer (a busy
    machine may need seconds for that).
    """
    return recipe(
        "/decoy",
        LOADED
        + f"""
- id: item
  tab: site
  fill: {{target: {{label: Item}}, value: Tea}}
- id: send
  tab: site
  timeout: {timeout}
  click: {{target: {click}}}
  effect: submit{extra}
  expect:
    - url: "**/decoy/done*"
""",
    )


def acted_on(result: IterationResult, step_id: str) -> list[str]:
    step = next(s for s in result.steps if s.step_id == step_id)
    return [e.found for e in step.evidence if e.kind == "acted_on"]


async def test_a_renamed_submit_button_is_missing_and_the_decoy_is_not_clicked(
    run_text: RunText, site: FixtureSite
) -> None:
    result = await run_text(order("{role: button, name: Submit}", timeout=FAIL_FAST_MS))
    assert result.state is IterationState.FAILED
    assert (result.reason_code, result.failing_step) == ("TARGET_MISSING", "send")
    assert 'no element matches button "Submit"' in (result.reason or "")
    assert site.submission_count("feedback") == 0
    assert site.submission_count("order") == 0


async def test_a_loose_target_opted_in_reaches_the_decoy_and_the_evidence_names_it(
    run_text: RunText, site: FixtureSite
) -> None:
    """What the default prevents: the loose match posts feedback, and says so."""
    text = order("{role: button, name: Submit, exact: false}", extra="\n  allow_loose_target: true")
    result = await run_text(text)
    assert result.verified, result.reason
    assert site.submission_count("feedback") == 1
    assert site.submission_count("order") == 0
    assert acted_on(result, "send") == [
        f'button "Submit feedback" <button>; submits form: POST {site.base_url}/decoy/feedback'
    ]


async def test_the_whole_name_is_clicked_and_the_form_it_sends_is_recorded(
    run_text: RunText, site: FixtureSite
) -> None:
    result = await run_text(order("{role: button, name: Place order}"))
    assert result.verified, result.reason
    assert site.submission_count("order") == 1
    assert site.submission_count("feedback") == 0
    assert acted_on(result, "item") == ['textbox "Item" <input type=text>']
    assert acted_on(result, "send") == [
        f'button "Place order" <button>; submits form: POST {site.base_url}/decoy/order'
    ]


async def test_an_exact_name_is_case_sensitive(run_text: RunText, site: FixtureSite) -> None:
    result = await run_text(order("{role: button, name: place order}", timeout=FAIL_FAST_MS))
    assert (result.reason_code, result.failing_step) == ("TARGET_MISSING", "send")
    assert site.submission_count() == 0


async def test_exact_false_matches_a_substring_in_any_case(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/decoy",
            """
            - id: feedback-button
              tab: site
              verify_outcome: {visible: {role: button, name: FEEDBACK, exact: false}}
            - id: whole-name-only
              tab: site
              verify_outcome: {count: {target: {role: button, name: Submit}, equals: 0}}
            """,
        )
    )
    assert result.verified, result.reason


# select: a value or label that no option has

SELECT_TIMEOUT_MS = 30_000  # generous: the failure must come from the options, not the wait


def select_step(body: str, *, start: str = "/form", timeout: int = SELECT_TIMEOUT_MS) -> str:
    return recipe(
        start, LOADED + f"- id: pick\n  tab: site\n  timeout: {timeout}\n  select: {body}\n"
    )


async def test_a_select_value_not_among_the_options_names_the_value_and_the_options(
    run_text: RunText, site: FixtureSite
) -> None:
    result = await run_text(select_step("{target: {label: Topic}, value: marketing}"))
    assert (result.reason_code, result.failing_step) == ("OPTION_MISSING", "pick")
    reason = result.reason or ""
    assert "select label \"Topic\": no option has the value or label 'marketing'" in reason
    assert "the options are: support (Support), sales (Sales), billing (Billing)" in reason
    error = last_step(result).error
    assert error is not None
    assert "options named in the message" in error["fix"]


async def test_a_select_label_is_matched_against_labels_only(run_text: RunText) -> None:
    # "sales" is a value, not a label ("Sales"): `label:` does not take it.
    result = await run_text(select_step("{target: {label: Topic}, label: sales}"))
    assert result.reason_code == "OPTION_MISSING"
    assert "'sales'" in (result.reason or "")


async def test_select_values_name_only_the_missing_one(run_text: RunText) -> None:
    result = await run_text(select_step("{target: {label: Topic}, values: [Billing, nope]}"))
    assert result.reason_code == "OPTION_MISSING"
    assert "the value or label 'nope';" in (result.reason or "")


async def test_a_select_with_no_options_waits_then_says_so(run_text: RunText) -> None:
    text = select_step("{target: {label: Size}, value: L}", start="/decoy", timeout=FAIL_FAST_MS)
    result = await run_text(text)
    assert result.reason_code == "OPTION_MISSING"
    assert "no option has the value or label 'L'; the select has no options" in (
        result.reason or ""
    )


async def test_a_select_by_label_records_the_select_it_acted_on(run_text: RunText) -> None:
    result = await run_text(select_step("{target: {label: Topic}, label: Billing}"))
    assert result.verified, result.reason
    assert acted_on(result, "pick") == ['combobox "Topic" <select>']


# The facts as plain data (no page needed): redaction and the length of an option list


def test_a_secret_in_an_element_name_or_form_address_is_redacted() -> None:
    facts = {"role": "button", "name": "Delete tok-9", "tag": "button", "type": ""}
    facts |= {"action": "http://127.0.0.1:1/delete?token=tok-9", "method": "POST"}
    summary = ActedOn.from_facts(facts, ["tok-9"]).summary()
    assert "tok-9" not in summary
    assert summary == (
        'button "Delete [redacted]" <button>; '
        "submits form: POST http://127.0.0.1:1/delete?token=[redacted]"
    )


def test_a_long_option_list_is_cut_short_in_the_error() -> None:
    options = [[f"v{i}", f"Option number {i} with a rather long label"] for i in range(40)]
    facts = {"role": "combobox", "name": "Pick", "tag": "select", "options": options}
    error = ActedOn.from_facts(facts, [], SelectChoices(value_or_label=("zz",))).option_missing(
        'select label "Pick"'
    )
    assert error is not None
    assert error.code == "OPTION_MISSING"
    assert error.message.endswith(" and 28 more")
    assert len(error.message) < 700
    assert "v11 (Option number 11 with a rather lon…" in error.message


def test_a_select_whose_options_have_not_arrived_is_left_to_wait() -> None:
    facts = {"role": "combobox", "name": "Size", "tag": "select", "options": []}
    read = ActedOn.from_facts(facts, [], SelectChoices(value_or_label=("L",)))
    assert read.option_missing("select") is None
    assert read.option_missing("select", waited=True) is not None


# The page's comparison, in Python: a label matches as written or as the page shows it.
@pytest.mark.parametrize(
    ("choices", "missing"),
    [
        (SelectChoices(value_or_label=("m",)), ()),  # a value
        (SelectChoices(value_or_label=("Medium size",)), ()),  # a label, spaces normalised
        (SelectChoices(value_or_label=("Medium\u00a0size ",)), ()),  # JavaScript's spaces
        (SelectChoices(labels=("Large",)), ()),  # soft hyphen and zero-width space dropped
        (SelectChoices(labels=("m",)), ("m",)),  # a label choice never matches a value
        (SelectChoices(value_or_label=("s", "xl"), labels=("Tiny",)), ("s", "xl", "Tiny")),
    ],
)
def test_select_choices_are_compared_with_the_options_as_the_page_would(
    choices: SelectChoices, missing: tuple[str, ...]
) -> None:
    options = [("m", "  Medium \n size "), ("l", "La\u00adr\u200bge")]
    assert choices.missing(options) == missing
    facts = {"role": "combobox", "name": "Size", "tag": "select", "options": options}
    read = ActedOn.from_facts(facts, [], choices)
    assert read.missing == missing
    assert read.options == ("m (Medium size)", "l (Large)")
