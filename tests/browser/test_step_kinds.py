"""Every step kind, in a real browser against the fixture site.

Actions are checked by what the server received (``site.submissions()``) where the page
submits something, so a test cannot pass on what the browser merely showed.
"""

from __future__ import annotations

import hashlib

import pytest

from fixtures.site_server import FixtureSite
from tests.browser.conftest import RunText, recipe
from tests.conftest import RECIPES

pytestmark = pytest.mark.browser

NOTES = RECIPES / "files" / "notes.txt"


async def test_goto_is_resolved_against_the_role_start(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/form",
            """
            - id: to-items
              tab: site
              goto: /items?page=2
              expect:
                - url: "**/items?page=2"
            """,
        )
    )
    assert result.verified, result.reason
    assert [s.kind for s in result.steps] == ["goto", "done_when"]


async def test_a_value_in_a_goto_reaches_the_server_as_one_value(run_text: RunText) -> None:
    """``&``, ``#``, ``/`` and ``%`` in a parameter stay inside the query value."""
    query = "Fish & chips #1 / 50%"
    result = await run_text(
        recipe(
            "/form",
            """
            - id: search
              tab: site
              goto: "/posts?q={{ query }}"
              expect:
                - url: "**/posts?q={{ query }}"
                - value: {target: {label: Search}, equals: "{{ query }}"}
            """,
            params="query: {type: string, required: true}",
        ),
        {"query": query},
    )
    assert result.verified, result.reason


async def test_click_follows_a_link(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/items?page=1",
            """
            - id: next
              tab: site
              click: {target: {role: link, name: Next, exact: true}}
              expect:
                - url: "**/items?page=2"
                - text: {target: {text: "Page 2 of", exact: false}, equals: "Page 2 of 10"}
            """,
        )
    )
    assert result.verified, result.reason


async def test_form_actions_reach_the_server(run_text: RunText, site: FixtureSite) -> None:
    """fill, select, check, uncheck, upload and a submitting click, read back from the server."""
    result = await run_text(
        recipe(
            "/form",
            """
            - id: name
              tab: site
              fill: {target: {label: Name}, value: "{{ name }}"}
            - id: message
              tab: site
              fill: {target: {label: Message}, value: "two\\nlines"}
            - id: topic
              tab: site
              select: {target: {label: Topic}, label: Billing}
            - id: subscribe
              tab: site
              check: {target: {role: checkbox, name: Subscribe to newsletter}}
              expect:
                - checked: {target: {role: checkbox, name: Subscribe to newsletter}}
            - id: unsubscribe
              tab: site
              uncheck: {target: {role: checkbox, name: Subscribe to newsletter}}
              expect:
                - checked: {target: {role: checkbox, name: Subscribe to newsletter}, checked: false}
            - id: agree
              tab: site
              check: {target: {role: checkbox, name: Agree to terms}}
            - id: priority
              tab: site
              check: {target: {role: radio, name: High}}
            - id: attach
              tab: site
              upload: {target: {label: Attachment}, files: ["{{ attachment }}"]}
            - id: send
              tab: site
              click: {target: {role: button, name: Send, exact: true}}
              effect: submit
              expect:
                - url: "**/form/thanks?id=*"
            """,
            params="""
            name: {type: string, required: true}
            attachment: {type: file, required: true}
            """,
        ),
        {"name": "Ada Lovelace", "attachment": str(NOTES)},
        files_dirs=(str(NOTES.parent),),  # an inline recipe has no folder of its own
    )
    assert result.verified, result.reason
    assert site.submission_count("contact") == 1
    (sent,) = site.submissions()
    assert sent["name"] == "Ada Lovelace"
    assert sent["message"].splitlines() == ["two", "lines"]
    assert sent["topic"] == "billing"
    assert (sent["subscribe"], sent["agree"], sent["priority"]) == ("no", "yes", "high")
    assert sent["attachment_filename"] == "notes.txt"
    assert sent["attachment_sha256"] == hashlib.sha256(NOTES.read_bytes()).hexdigest()


async def test_select_by_value_label_or_values(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/form",
            """
            - id: by-value
              tab: site
              select: {target: {label: Topic}, value: sales}
              expect:
                - value: {target: {label: Topic}, equals: sales}
            - id: by-label
              tab: site
              select: {target: {label: Topic}, label: Billing}
              expect:
                - value: {target: {label: Topic}, equals: billing}
            - id: by-values
              tab: site
              select: {target: {label: Topic}, values: [support]}
            - id: chosen
              tab: site
              verify_field: {target: {label: Topic}, equals: support}
            """,
        )
    )
    assert result.verified, (result.failing_step, result.reason)


@pytest.mark.parametrize(
    "press",
    ["{key: Enter, target: {label: Title}}", "{key: Enter}"],
    ids=["on-target", "on-focused-element"],
)
async def test_press_submits_the_form(run_text: RunText, site: FixtureSite, press: str) -> None:
    result = await run_text(
        recipe(
            "/posts/new",
            f"""
            - id: title
              tab: site
              fill: {{target: {{label: Title}}, value: Pressed}}
            - id: enter
              tab: site
              press: {press}
              expect:
                - text: {{target: {{role: status}}, equals: "Post published: Pressed"}}
            """,
        )
    )
    assert result.verified, result.reason
    assert [p["title"] for p in site.submissions()] == ["Pressed"]


async def test_hover_moves_the_pointer_onto_the_target(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/menu",
            """
            - id: hover
              tab: site
              hover: {target: {role: button, name: Menu, exact: true}}
              expect:
                - count: {target: {css: "#menu-button:hover"}, equals: 1}
            """,
        )
    )
    assert result.verified, result.reason


async def test_wait_for_auto_waits_for_late_content(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/delayed?ms=600",
            """
            - id: ready
              tab: site
              wait_for: {visible: {role: heading, name: Report ready}}
            - id: placeholder-gone
              tab: site
              verify_outcome: {hidden: {text: "Loading...", exact: true}}
            """,
        )
    )
    assert result.verified, result.reason
    assert [s.kind for s in result.steps[:2]] == ["wait_for", "verify_outcome"]


async def test_verify_field_and_verify_outcome(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/form",
            """
            - id: email
              tab: site
              fill: {target: {label: Email}, value: ada@example.test}
            - id: email-kept
              tab: site
              verify_field: {target: {label: Email}, equals: ada@example.test}
            - id: on-form
              tab: site
              verify_outcome: {visible: {role: heading, name: Contact form}}
            """,
        )
    )
    assert result.verified, result.reason
    assert all(len(s.evidence) >= 1 for s in result.steps[1:3])


async def test_passive_steps_change_nothing_on_the_server(
    run_text: RunText, site: FixtureSite
) -> None:
    result = await run_text(
        recipe(
            "/posts",
            """
            - id: listed
              tab: site
              wait_for: {visible: {text: No posts}}
            - id: search-empty
              tab: site
              verify_field: {target: {label: Search}, equals: ""}
            - id: heading
              tab: site
              extract: {as: heading, from: text, target: {role: heading, name: Posts}}
            """,
        )
    )
    assert result.verified, result.reason
    assert site.submission_count() == 0


async def test_extract_reads_every_source(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/posts?q=needle",
            """
            - id: url
              tab: site
              extract: {as: query, from: url, regex: "q=(\\\\w+)"}
            - id: title
              tab: site
              extract: {as: title, from: title}
            - id: text
              tab: site
              extract: {as: empty, from: text, target: {text: No posts}}
            - id: attribute
              tab: site
              extract:
                as: new_link
                from: attribute
                attribute: href
                target: {role: link, name: New post}
            - id: value
              tab: site
              extract: {as: search, from: value, target: {label: Search}}
            """,
            tail="""
            outputs:
              page_title: {tab: site, from: title}
            """,
        )
    )
    assert result.verified, result.reason
    assert dict(result.outputs) == {
        "query": "needle",
        "title": "Posts",
        "empty": "No posts",
        "new_link": "/posts/new",
        "search": "needle",
        "page_title": "Posts",
    }


async def test_extract_reads_the_page_as_it_is_at_its_step(run_text: RunText) -> None:
    result = await run_text(
        recipe(
            "/items?page=1",
            """
            - id: first-page-url
              tab: site
              extract: {as: first_url, from: url}
            - id: next
              tab: site
              click: {target: {role: link, name: Next, exact: true}}
              expect:
                - url: "**/items?page=2"
            """,
        )
    )
    assert result.verified, result.reason
    assert result.outputs["first_url"].endswith("/items?page=1")
