"""The pure decisions of a diagnosis: which target, which candidates, the stored diff."""

from __future__ import annotations

from northstar.monitor.observation import Node, Observation
from northstar.recipe.model import Check, Target
from northstar.run.diagnosis import build_diagnosis, candidates, diagnosed_target
from northstar.run.fixes import line_counts, unified_diff

SEND = Target(role="button", name="Send")


def page(*nodes: tuple[str, str], tab: str = "site") -> Observation:
    built = tuple(
        Node(role=r, name=n, ref=f"e{i}", path=(f'{r} "{n}"',)) for i, (r, n) in enumerate(nodes)
    )
    return Observation(tab=tab, url="http://h/form", snapshot_id="s", nodes=built)


def test_candidates_put_the_same_role_first_then_close_names_of_other_roles() -> None:
    found = candidates(
        SEND,
        page(
            ("link", "Send feedback"),
            ("button", "Cancel"),
            ("button", "Send message"),
            ("heading", "Contact"),
        ),
    )
    assert [(c["role"], c["name"]) for c in found] == [
        ("button", "Send message"),
        ("button", "Cancel"),
        ("link", "Send feedback"),
    ]
    assert found[0]["closeness"] == 0.8
    assert found[0]["same_role"] is True


def test_the_check_the_message_names_is_the_target_of_an_expectation_failure() -> None:
    heading = Check(visible=Target(role="heading", name="Thank you"))
    message = f"{heading.describe()}: element(s) not found"
    assert diagnosed_target(SEND, (heading,), message) == heading.visible
    assert diagnosed_target(SEND, (heading,), "no element matches") == SEND
    assert diagnosed_target(None, (Check(url="**/x"), heading), "other") == heading.visible


def test_a_diagnosis_without_a_baseline_says_so_and_shows_no_references() -> None:
    where = {"step": "send", "tab": "site", "code": "TARGET_MISSING", "message": "m"}
    diagnosis = build_diagnosis(where, SEND, page(("button", "Send message")), None)
    assert diagnosis["changes"] is None
    assert "no baseline" in diagnosis["note"]
    assert "[ref=" not in diagnosis["observation"]
    before = page(("button", "Send"))
    changed = build_diagnosis(where, SEND, page(("button", "Send message")), before)
    assert '- button "Send"' in changed["changes"].splitlines()
    gone = build_diagnosis(where, SEND, None, before)
    assert gone["observation"] is None
    assert gone["candidates"] == []


def test_the_stored_diff_counts_its_lines_without_the_file_headers() -> None:
    diff = unified_diff("r.yaml", "a\nb\nc\n", "a\nB\nc\nd\n")
    assert diff.startswith("--- r.yaml\n+++ r.yaml (proposed)\n")
    assert line_counts(diff) == (2, 1)
    assert unified_diff("r.yaml", "same\n", "same\n") == ""
