"""Agent sessions in real headless Chromium against the fixture site, driven by test code."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from fixtures.site_server import FixtureSite
from northstar.agent import AgentHost
from northstar.errors import (
    CredentialsInvalid,
    IdempotencyConflict,
    OriginBlocked,
    OutcomeUnknown,
    StaleReference,
    UsageInvalid,
)
from northstar.journal import Journal
from northstar.plan.model import BoundStep, Plan
from northstar.results import Evidence
from tests.agent.conftest import ref_of

pytestmark = pytest.mark.browser


async def test_a_scripted_agent_explores_loops_and_submits_once(
    agents: AgentHost, site: FixtureSite, journal: Journal
) -> None:
    base = site.base_url
    opened = await agents.open_session({"main": {"start": f"{base}/menu/counter"}})
    sid, credential = opened.session_id, opened.credential

    first = await agents.observe(sid, credential, "main")
    assert first.full
    assert first.signal is None
    menu = ref_of(first.text, 'button "Menu"')

    with pytest.raises(CredentialsInvalid):
        await agents.observe(sid, "not-the-credential", "main")

    # Open the menu by reference: the answer says what changed, with the new references.
    shown = await agents.act(sid, credential, "main", "click", ref=menu)
    assert not shown.page.full
    assert '~ button "Menu"' in shown.text
    assert "[expanded]" in shown.text
    profile = ref_of(shown.text, 'menuitem "Profile"')

    # Closing it removes the item: its reference is stale, and says what it was.
    await agents.act(sid, credential, "main", "click", ref=menu)
    with pytest.raises(StaleReference, match='menuitem "Profile"'):
        await agents.act(sid, credential, "main", "click", ref=profile)

    # Open and close again, though the page's counter changes every time: by the sixth
    # open/close an answer carries the loop signal, as advice.
    signalled_at = None
    for toggle in range(3, 9):
        answer = await agents.act(sid, credential, "main", "click", ref=menu)
        if answer.signal is not None and signalled_at is None:
            signalled_at = toggle
            assert answer.signal.guidance in answer.text
            assert "Opened" not in answer.signal.model_dump_json()
    assert signalled_at is not None
    assert signalled_at <= 6
    assert "Opened 4 times" in (await agents.observe(sid, credential, "main", full=True)).text

    # Carry on elsewhere: out of the tab's origins is blocked, whatever the agent asks;
    # a change of course, and the signal is gone.
    with pytest.raises(OriginBlocked):
        await agents.act(sid, credential, "main", "goto", value="http://example.invalid/")
    form = await agents.act(
        sid, credential, "main", "click", target={"role": "link", "name": "Contact form"}
    )
    assert form.signal is None
    assert form.page.full
    assert form.page.url == f"{base}/form"
    name = ref_of(form.text, 'textbox "Name"')
    send = ref_of(form.text, 'button "Send"')
    filled = await agents.act(sid, credential, "main", "fill", ref=name, value="Ada Lovelace")
    assert '~ textbox "Name"' in filled.text

    sent = await agents.act(sid, credential, "main", "click", ref=send, submit=True)
    assert sent.dispatched
    assert "Message #1 received from Ada Lovelace" in sent.text
    again = await agents.act(sid, credential, "main", "click", ref=send, submit=True)
    assert not again.dispatched
    assert again.page == sent.page
    assert again.submission_key == sent.submission_key
    assert site.submission_count("contact") == 1

    closed = await agents.close_session(sid, credential)
    assert closed.status == "stopped"
    assert journal.run_record(sid).status == "stopped"
    assert sent.submission_key is not None
    record = journal.submission(sid, 1, sent.submission_key)
    assert record is not None
    assert record.state == "verified"
    assert _step_events(journal.path, sid, sent.submission_key) == [
        "started",
        "in_flight",
        "dispatched",
        "passed",
        "started",
        "passed",
    ]


def _step_events(path: Path, run_id: str, step_id: str) -> list[str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT event FROM step_events WHERE run_id = ? AND step_id = ? ORDER BY id",
            (run_id, step_id),
        ).fetchall()
    return [event for (event,) in rows]


async def test_a_reference_from_an_earlier_page_is_stale_and_nothing_is_sent(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/form"}})
    sid, credential = opened.session_id, opened.credential
    form = await agents.observe(sid, credential, "main")
    name = ref_of(form.text, 'textbox "Name"')
    send = ref_of(form.text, 'button "Send"')
    await agents.act(sid, credential, "main", "fill", ref=name, value="Ann")
    reloaded = await agents.act(sid, credential, "main", "goto", value="/form")
    assert reloaded.page.full  # a new document: none of the old references works
    with pytest.raises(StaleReference, match='button "Send"'):
        await agents.act(sid, credential, "main", "click", ref=send, submit=True)
    with pytest.raises(StaleReference, match="no observation showed it"):
        await agents.act(sid, credential, "main", "click", ref="e999")
    assert site.submission_count() == 0


async def test_a_link_out_of_the_tab_origins_is_blocked(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/external"}})
    sid, credential = opened.session_id, opened.credential
    page = await agents.observe(sid, credential, "main")
    leave = ref_of(page.text, 'link "Leave site"')
    with pytest.raises(OriginBlocked, match=r"example\.invalid"):
        await agents.act(sid, credential, "main", "click", ref=leave)
    # The request never left: the tab shows the browser's own error page, not the site.
    after = await agents.observe(sid, credential, "main")
    assert not after.url.startswith("http://example.invalid")


async def test_credentials_are_checked_on_every_call_and_a_closed_session_is_gone(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/"}})
    other = await agents.open_session({"main": {"start": f"{site.base_url}/"}})
    sid, credential = opened.session_id, opened.credential
    calls: list[Callable[[str], Any]] = [
        lambda c: agents.observe(sid, c, "main"),
        lambda c: agents.act(sid, c, "main", "goto", value="/form"),
        lambda c: agents.check(sid, c, "main", {"title": {"contains": "fixture"}}),
        lambda c: agents.close_session(sid, c),
    ]
    for call in calls:
        for wrong in ("", "x" * 43, other.credential):
            with pytest.raises(CredentialsInvalid):
                await call(wrong)
    await agents.close_session(sid, credential)
    with pytest.raises(CredentialsInvalid, match="no open agent session"):
        await agents.observe(sid, credential, "main")
    assert (await agents.observe(other.session_id, other.credential, "main")).full


async def test_every_action_kind_fills_and_sends_the_form(
    agents: AgentHost, site: FixtureSite, uploads: Path
) -> None:
    (uploads / "note.txt").write_text("hello")
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/form"}})
    sid, credential = opened.session_id, opened.credential
    page = (await agents.observe(sid, credential, "main")).text
    act = agents.act
    await act(sid, credential, "main", "fill", target={"label": "Name"}, value="Grace")
    await act(
        sid, credential, "main", "fill", ref=ref_of(page, 'textbox "Email"'), value="g@x.test"
    )
    await act(
        sid, credential, "main", "select", ref=ref_of(page, 'combobox "Topic"'), value="Sales"
    )
    await act(sid, credential, "main", "check", ref=ref_of(page, 'checkbox "Agree to terms"'))
    await act(sid, credential, "main", "check", target={"role": "radio", "name": "High"})
    await act(sid, credential, "main", "hover", ref=ref_of(page, 'button "Send"'))
    await act(sid, credential, "main", "upload", target={"label": "Attachment"}, value="note.txt")
    message = ref_of(page, 'textbox "Message"')
    await act(sid, credential, "main", "fill", ref=message, value="Hi")
    await act(sid, credential, "main", "press", ref=message, value="End")
    sent = await act(
        sid, credential, "main", "press", target={"label": "Email"}, value="Enter", submit=True
    )
    assert sent.dispatched
    assert "Thank you" in sent.text
    (contact,) = site.submissions()
    assert contact["name"] == "Grace"
    assert contact["email"] == "g@x.test"
    assert (contact["topic"], contact["agree"], contact["priority"]) == ("sales", "yes", "high")
    assert contact["attachment_filename"] == "note.txt"


async def test_the_same_key_with_other_inputs_is_a_conflict_and_sends_nothing(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/posts/new"}})
    sid, credential = opened.session_id, opened.credential
    title = {"label": "Title"}
    publish = {"role": "button", "name": "Publish"}
    await agents.act(sid, credential, "main", "fill", target=title, value="First")
    first = await agents.act(
        sid, credential, "main", "click", target=publish, submit=True, key="post-1"
    )
    assert first.dispatched
    await agents.act(sid, credential, "main", "goto", value="/posts/new")
    await agents.act(sid, credential, "main", "fill", target=title, value="Second")
    with pytest.raises(IdempotencyConflict, match="other inputs"):
        await agents.act(
            sid,
            credential,
            "main",
            "press",
            target=title,
            value="Enter",
            submit=True,
            key="post-1",
        )
    same = await agents.act(
        sid, credential, "main", "click", target=publish, submit=True, key="post-1"
    )
    assert not same.dispatched
    assert site.submission_count("post") == 1
    second = await agents.act(
        sid, credential, "main", "click", target=publish, submit=True, key="post-2"
    )
    assert second.dispatched
    assert [s["title"] for s in site.submissions()] == ["First", "Second"]


async def test_a_submission_that_fails_after_it_was_sent_is_unknown_and_blocks(
    agents: AgentHost, site: FixtureSite, journal: Journal
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/"}})
    sid, credential = opened.session_id, opened.credential
    with pytest.raises(OutcomeUnknown, match="NAVIGATION_FAILED"):
        await agents.act(sid, credential, "main", "goto", value="/form/thanks?id=7", submit=True)
    with pytest.raises(OutcomeUnknown, match="not sent again"):
        await agents.act(sid, credential, "main", "goto", value="/form/thanks?id=7", submit=True)
    assert (await agents.close_session(sid, credential)).status == "blocked"
    assert journal.run_record(sid).status == "blocked"


class _SpyHost:
    """The real host, whose sessions report what the journal held right before each send."""

    def __init__(self, host: Any, seen: Callable[[], None]) -> None:
        self._host = host
        self._seen = seen

    @asynccontextmanager
    async def session(self, plan: Plan) -> AsyncIterator[Any]:
        async with self._host.session(plan) as real:
            yield _SpySession(real, self._seen)


class _SpySession:
    def __init__(self, real: Any, seen: Callable[[], None]) -> None:
        self._real = real
        self._seen = seen

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    async def perform_on_reference(
        self, step: BoundStep, reference: Any, *, before_dispatch: Callable[[], None]
    ) -> tuple[Evidence, ...]:
        def spying() -> None:
            before_dispatch()
            self._seen()

        return await self._real.perform_on_reference(step, reference, before_dispatch=spying)


async def test_a_submission_is_in_flight_in_the_journal_before_it_is_sent(
    host: Any, journal: Journal, site: FixtureSite
) -> None:
    seen: list[tuple[list[str], int]] = []

    def look() -> None:  # another connection: what is committed, as after a crash
        with sqlite3.connect(f"file:{journal.path}?mode=ro", uri=True) as db:
            states = [s for (s,) in db.execute("SELECT state FROM submissions").fetchall()]
        seen.append((states, site.submission_count()))

    async with AgentHost(_SpyHost(host, look), journal) as agents:  # type: ignore[arg-type]
        opened = await agents.open_session({"main": {"start": f"{site.base_url}/posts/new"}})
        sid, credential = opened.session_id, opened.credential
        page = (await agents.observe(sid, credential, "main")).text
        await agents.act(
            sid, credential, "main", "fill", ref=ref_of(page, 'textbox "Title"'), value="T"
        )
        publish = ref_of(page, 'button "Publish"')
        await agents.act(sid, credential, "main", "click", ref=publish, submit=True)
    assert seen[-1] == (["in_flight"], 0)
    assert site.submission_count("post") == 1


async def test_a_check_is_passive_and_says_whether_it_held(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/menu/counter"}})
    sid, credential = opened.session_id, opened.credential
    await agents.observe(sid, credential, "main")
    heading = {"visible": {"role": "heading", "name": "Counted menu"}}
    answers = [await agents.check(sid, credential, "main", heading) for _ in range(10)]
    assert all(a.held and a.signal is None for a in answers)
    missing = await agents.check(sid, credential, "main", {"url": "**/elsewhere"}, timeout_ms=300)
    assert not missing.held
    assert "did not hold" in missing.text
    with pytest.raises(UsageInvalid):
        await agents.check(sid, credential, "main", {"visible": {"role": "heading"}, "url": "x"})


async def test_observe_answers_changes_after_the_first_look_and_the_whole_page_on_request(
    agents: AgentHost, site: FixtureSite
) -> None:
    """Sizes of answers on fixture pages: printed (``pytest -s``) for the README."""
    sizes: dict[str, tuple[int, int]] = {}
    for path, action in (
        ("/menu/counter", ("click", 'button "Menu"', None)),
        ("/form", ("fill", 'textbox "Name"', "Ada")),
        ("/items?page=1", ("click", 'link "Next"', None)),
        ("/big?n=300", ("hover", "heading", None)),
    ):
        opened = await agents.open_session({"main": {"start": site.base_url + path}})
        sid, credential = opened.session_id, opened.credential
        whole = await agents.observe(sid, credential, "main")
        kind, label, value = action
        acted = await agents.act(
            sid, credential, "main", kind, ref=ref_of(whole.text, label), value=value
        )
        unchanged = await agents.observe(sid, credential, "main")
        again = await agents.observe(sid, credential, "main", full=True)
        assert whole.full
        assert again.full
        assert not unchanged.full
        assert "no change since the last observation" in unchanged.text
        sizes[path] = (len(again.text), len(acted.text))
        await agents.close_session(sid, credential)
    print("\nanswer sizes in characters (whole page, after one action):")
    for path, (whole_size, after) in sizes.items():
        print(f"  {path:16} whole {whole_size:6}   after the action {after:6}")
    assert sizes["/menu/counter"][1] < sizes["/menu/counter"][0]
    assert sizes["/form"][1] * 5 < sizes["/form"][0]
    assert sizes["/big?n=300"][1] * 20 < sizes["/big?n=300"][0]
