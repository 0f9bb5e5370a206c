"""Answers that cost a model's context only what they say, in real Chromium on the fixtures.

An act that changed nothing is one line; one that changed the tab in place is the changed
lines without the tab's header; the structured fields say only what the text does not say
as data. The whole page leaves out what tells nothing (wrapper paragraphs, a label's text
beside its control) and shows a nameless button's text as its name, marked as derived.
"""

from __future__ import annotations

from fixtures.site_server import FixtureSite
from northstar.agent import AgentHost
from tests.agent.conftest import ref_of


async def test_an_act_answers_one_line_or_only_what_changed(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/form"}})
    sid, credential = opened.session_id, opened.credential
    whole = await agents.observe(sid, credential, "main")
    name = ref_of(whole.text, 'textbox "Name"')

    filled = await agents.act(sid, credential, "main", "fill", ref=name, value="Ada")
    assert filled.text.splitlines() == [
        f'fill textbox "Name" (ref {name})',
        f'~ textbox "Name" [ref={name}]: "Ada" (was -)',
    ]
    assert filled.fields() == {"changed": True}

    heading = ref_of(whole.text, 'heading "Contact form"')
    hovered = await agents.act(sid, credential, "main", "hover", ref=heading)
    assert hovered.text == f'hover heading "Contact form" (ref {heading}): no change'
    assert hovered.fields() == {"changed": False}

    send = ref_of(whole.text, 'button "Send"')
    sent = await agents.act(sid, credential, "main", "click", ref=send, submit=True)
    lines = sent.text.splitlines()
    assert lines[0] == f'click button "Send" (ref {send})'
    assert lines[1].startswith('tab "main": Thank you <')  # a new URL: the page, once
    fields = sent.fields()
    assert fields["dispatched"] is True
    assert fields["page"]["url"].endswith("/form/thanks?id=1")
    assert "text" not in fields["page"]
    assert "did" not in fields  # it is the text's first line
    await agents.close_session(sid, credential)


async def test_the_whole_page_leaves_out_wrappers_and_label_text(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/form"}})
    text = (await agents.observe(opened.session_id, opened.credential, "main")).text
    lines = text.splitlines()
    assert not any(line.lstrip().startswith("- paragraph") for line in lines)
    assert "- text: Name" not in text  # the textbox's own line names it
    assert any(line.startswith('- textbox "Name" [ref=') for line in lines)  # moved up
    assert any(line.startswith('  - radio "Low" [ref=') for line in lines)  # under its group
    await agents.close_session(opened.session_id, opened.credential)


async def test_a_button_named_by_a_child_element_shows_that_name_marked_derived(
    agents: AgentHost, site: FixtureSite
) -> None:
    opened = await agents.open_session({"main": {"start": f"{site.base_url}/admin/pages/add"}})
    text = (await agents.observe(opened.session_id, opened.credential, "main")).text
    assert 'button "Publish" (from text) [ref=' in text
    assert 'button "Save draft" (from text) [ref=' in text
    await agents.close_session(opened.session_id, opened.credential)
