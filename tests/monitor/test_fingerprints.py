"""Fingerprints, references and the snapshot parser, on plain text (no browser)."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from northstar.errors import StaleReference
from northstar.monitor.fingerprints import (
    ActionRecord,
    TargetDescription,
    describe_recipe_target,
    digest_typed_input,
    fingerprint_action,
    fingerprint_observation,
    observation_controls_key,
    observation_cycle_key,
    observation_state_key,
    resolve_reference,
)
from northstar.monitor.observation import (
    FrameScope,
    MediaState,
    Observation,
    build_observation,
    parse_aria_snapshot,
)
from northstar.recipe.model import Target

PAGE = """\
- generic [active] [ref={a}]:
  - heading "Orders" [level=1] [ref={b}]
  - checkbox "Only open" [ref={c}]
  - textbox "Search" [ref={d}]: {typed}
  - paragraph [ref={e}]: Updated {clock}
  - button "Menu" [ref={f}]{expanded}
"""


def page(
    *,
    refs: tuple[int, ...] = (1, 2, 3, 4, 5, 6),
    typed: str = '""',
    clock: str = "10:31:02",
    expanded: str = "",
    snapshot_id: str = "s1",
    url: str = "http://site.test/orders",
    tab: str = "admin",
    media: tuple[MediaState, ...] = (),
) -> Observation:
    names = dict(zip("abcdef", (f"e{r}" for r in refs), strict=True))
    text = PAGE.format(typed=typed, clock=clock, expanded=expanded, **names)
    return build_observation(
        tab=tab, url=url, snapshot_text=text, snapshot_id=snapshot_id, media=media
    )


# Observation fingerprints


def test_a_fresh_snapshot_of_the_same_state_is_the_same_state() -> None:
    first = page()
    again = page(refs=(11, 12, 13, 14, 15, 16), snapshot_id="s2")
    assert fingerprint_observation(first) == fingerprint_observation(again)
    assert observation_state_key(first) == observation_state_key(again)


def test_focus_moving_is_not_a_change() -> None:
    refs = {letter: f"e{i}" for i, letter in enumerate("abcdef", start=1)}
    text = PAGE.replace("[active] ", "").replace('"Menu" [ref', '"Menu" [active] [ref')
    text = text.format(typed='""', clock="10:31:02", expanded="", **refs)
    moved = build_observation(
        tab="admin", url="http://site.test/orders", snapshot_id="s3", snapshot_text=text
    )
    assert moved.nodes[-1].states.focused
    assert fingerprint_observation(moved) == fingerprint_observation(page())


@pytest.mark.parametrize(
    "changed",
    [
        {"expanded": " [expanded]"},
        {"url": "http://site.test/orders?page=2"},
        {"tab": "preview"},
    ],
)
def test_state_changes_change_both_fingerprints(changed: dict[str, str]) -> None:
    other = page(**changed)  # type: ignore[arg-type]
    assert fingerprint_observation(other) != fingerprint_observation(page())
    assert observation_state_key(other) != observation_state_key(page())


def test_typed_values_and_clocks_change_the_fingerprint_but_not_the_state_key() -> None:
    for other in (page(typed="shoes"), page(clock="10:31:07")):
        assert fingerprint_observation(other) != fingerprint_observation(page())
        assert observation_state_key(other) == observation_state_key(page())


def test_media_playback_position_is_exact_state_only() -> None:
    def video(position: float, paused: bool = False) -> tuple[MediaState, ...]:
        return (MediaState(kind="video", name="Intro", paused=paused, current_time=position),)

    playing, later = page(media=video(1.0)), page(media=video(9.0))
    assert fingerprint_observation(playing) != fingerprint_observation(later)
    assert observation_state_key(playing) == observation_state_key(later)
    assert observation_state_key(page(media=video(9.0, paused=True))) != observation_state_key(
        later
    )


def test_the_cycle_key_leaves_out_numbers_in_text_but_not_in_controls() -> None:
    def counted(text: str, button: str = "Menu") -> Observation:
        snapshot = f'- button "{button}" [ref=e1]\n- paragraph [ref=e2]: {text}'
        return build_observation(
            tab="admin", url="http://s/", snapshot_text=snapshot, snapshot_id="s"
        )

    first, later = counted("Opened 1 times, 2.5 kg"), counted("Opened 12 times, 3.75 kg")
    assert observation_state_key(first) != observation_state_key(later)
    assert observation_cycle_key(first) == observation_cycle_key(later)
    assert observation_cycle_key(counted("Opened 1 times")) != observation_cycle_key(
        counted("Closed 1 times")
    )
    assert observation_cycle_key(counted("x", "Page 2")) != observation_cycle_key(
        counted("x", "Page 3")
    )


def test_the_controls_key_covers_controls_and_their_states_only() -> None:
    other_heading = PAGE.replace('"Orders"', '"Invoices"').replace("Updated", "Changed")
    refs = {letter: f"e{i}" for i, letter in enumerate("abcdef", start=1)}
    text = other_heading.format(typed='""', clock="10:31:02", expanded="", **refs)
    renamed = build_observation(
        tab="admin", url="http://site.test/orders", snapshot_text=text, snapshot_id="s9"
    )
    assert observation_state_key(renamed) != observation_state_key(page())
    assert observation_controls_key(renamed) == observation_controls_key(page())
    assert observation_controls_key(page(expanded=" [expanded]")) != observation_controls_key(
        page()
    )
    assert observation_controls_key(page(url="http://site.test/x")) != observation_controls_key(
        page()
    )


# References


def test_resolve_reference_finds_the_node_of_the_current_observation() -> None:
    current = page()
    node = resolve_reference(current, "e6")
    assert (node.role, node.name) == ("button", "Menu")
    assert resolve_reference(current, current.reference("e6")) == node


def test_a_reference_from_an_older_snapshot_is_stale() -> None:
    older, current = page(snapshot_id="s1"), page(snapshot_id="s2")
    with pytest.raises(StaleReference) as caught:
        resolve_reference(current, older.reference("e6"))
    assert caught.value.code == "STALE_REFERENCE"
    assert "observe the tab again" in str(caught.value)
    assert caught.value.context["tab"] == "admin"


def test_a_reference_that_is_not_in_the_observation_is_stale() -> None:
    with pytest.raises(StaleReference, match="observe the tab again"):
        resolve_reference(page(), "e99")
    with pytest.raises(StaleReference):
        ActionRecord.on_reference("click", page(), "e99", executed=True)


# Action fingerprints


def test_the_same_logical_click_through_different_references_is_one_fingerprint() -> None:
    first = ActionRecord.on_reference("click", page(), "e6", executed=True)
    other = page(refs=(21, 22, 23, 24, 25, 26), snapshot_id="s9")
    second = ActionRecord.on_reference("click", other, "e26", executed=True)
    assert first.target == TargetDescription(role="button", name="Menu")
    assert fingerprint_action(first) == fingerprint_action(second)


def test_the_description_holds_no_reference() -> None:
    record = ActionRecord.on_reference("click", page(), "e6", executed=True)
    assert "e6" not in record.model_dump_json()


@pytest.mark.parametrize(
    "other",
    [
        ActionRecord.create("fill", tab="admin", url="u", typed="foo", executed=True),
        ActionRecord.create("fill", tab="admin", url="u", typed="Foo ", executed=True),
        ActionRecord.create("press", tab="admin", url="u", typed="Foo", executed=True),
        ActionRecord.create("fill", tab="preview", url="u", typed="Foo", executed=True),
        ActionRecord.create("fill", tab="admin", url="v", typed="Foo", executed=True),
        ActionRecord.create(
            "fill",
            tab="admin",
            url="u",
            typed="Foo",
            executed=True,
            target=TargetDescription(role="textbox", name="Title"),
        ),
    ],
)
def test_actions_differ_by_input_case_kind_tab_url_and_target(other: ActionRecord) -> None:
    base = ActionRecord.create("fill", tab="admin", url="u", typed="Foo", executed=True)
    assert fingerprint_action(base) != fingerprint_action(other)


def test_typed_input_is_digested_not_case_folded() -> None:
    assert digest_typed_input("Foo") != digest_typed_input("foo")
    assert digest_typed_input("Foo") == digest_typed_input("Foo")
    assert re.fullmatch(r"[0-9a-f]{64}", digest_typed_input("Foo"))


def test_recipe_targets_are_described_by_their_locator() -> None:
    assert describe_recipe_target(Target(role="button", name="Save")) == TargetDescription(
        role="button", name="Save"
    )
    assert describe_recipe_target(Target(label="Title")) == TargetDescription(
        role="label", name="Title"
    )


# The snapshot parser


SNAPSHOT = r"""
- generic [active] [ref=e1]:
  - heading [level=2] [ref=e2]:
    - text: Hello
    - link "World" [ref=e3] [cursor=pointer]:
      - /url: /world
  - 'link "Colon: \"quoted\" it''s" [ref=e4]':
    - /url: /b
  - textbox "Email" [ref=e5]:
    - /placeholder: you@example.com
  - checkbox "Terms" [checked=mixed] [disabled] [ref=e6]
  - button "Bold" [pressed] [ref=e7]
  - tab "One" [selected] [ref=e8]
  - slider "Volume" [ref=e9]: "3"
  - paragraph [ref=e10]: "Tab\there, quote \" and \\ backslash \x7f"
  - table "People" [ref=e11]:
    - rowgroup [ref=e12]:
      - row [ref=e13]:
        - columnheader "Name" [ref=e14]
        - columnheader "Age" [ref=e15]
      - row [ref=e16]:
        - cell "Ann" [ref=e17]
        - cell [ref=e18]:
          - text: "30"
  - iframe [ref=e19]:
    - button "Inside" [ref=f1e2]
"""


def test_the_parser_reads_roles_names_values_states_and_properties() -> None:
    nodes = {n.ref: n for n in parse_aria_snapshot(SNAPSHOT) if n.ref}
    assert nodes["e1"].structural
    assert nodes["e1"].states.focused
    assert nodes["e2"].states.level == 2
    assert (nodes["e3"].name, nodes["e3"].url) == ("World", "/world")
    assert nodes["e3"].path == ("heading", 'link "World"')
    assert nodes["e4"].name == 'Colon: "quoted" it\'s'
    assert nodes["e5"].placeholder == "you@example.com"
    assert nodes["e6"].states.checked == "mixed"
    assert nodes["e6"].states.disabled
    assert nodes["e7"].states.pressed is True
    assert nodes["e8"].states.selected
    assert nodes["e9"].value == "3"
    assert nodes["e10"].value == 'Tab\there, quote " and \\ backslash \x7f'
    assert nodes["f1e2"].path == ("iframe", 'button "Inside"')


def test_controls_are_the_operable_nodes_with_their_states() -> None:
    controls = {(n.role, n.name): n.states for n in page(expanded=" [expanded]").controls()}
    assert set(controls) == {("checkbox", "Only open"), ("textbox", "Search"), ("button", "Menu")}
    assert controls[("button", "Menu")].expanded


def test_tables_text_and_frames_become_plain_data() -> None:
    frames = (
        FrameScope(index=0, url="http://site.test/"),
        FrameScope(index=1, url="http://site.test/inner", parent=0, name="pay"),
    )
    observation = build_observation(
        tab="admin", url="http://site.test/", snapshot_text=SNAPSHOT, snapshot_id="s", frames=frames
    )
    (table,) = observation.tables
    assert (table.name, table.headers, table.rows) == ("People", ("Name", "Age"), (("Ann", "30"),))
    assert "Hello" in observation.text.splitlines()
    assert observation.frames[1].parent == 0


def test_secrets_are_redacted_everywhere_including_url_encoded() -> None:
    secret = "p@ss word"
    text = (
        f'- link "Hi {secret}" [ref=e1]:\n  - /url: /x?q=p%40ss%20word\n'
        f'- textbox "T" [ref=e2]: {secret}'
    )
    observation = build_observation(
        tab="admin",
        url="http://site.test/?token=p%40ss+word",
        title=f"Welcome {secret}",
        snapshot_text=text,
        snapshot_id="s",
        media=(MediaState(kind="image", name=secret, src=f"/img?{secret}"),),
        secret_values=[secret],
    )
    dumped = observation.model_dump_json()
    assert secret not in dumped
    assert "p%40ss" not in dumped
    link, textbox = observation.nodes
    assert (link.name, link.url, textbox.value) == (
        "Hi [redacted]",
        "/x?q=[redacted]",
        "[redacted]",
    )
    assert observation.url == "http://site.test/?token=[redacted]"
    assert observation.title == "Welcome [redacted]"
    assert observation.media[0].src == "/img?[redacted]"


def test_password_fields_are_redacted_and_marked_sensitive() -> None:
    text = (
        '- textbox "PIN" [ref=e1]: 12345\n- textbox "Note" [ref=e2]: hello\n'
        '- textbox "Old" [ref=e3]: s3cr3t'
    )
    observation = build_observation(
        tab="admin",
        url="http://site.test/",
        snapshot_text=text,
        snapshot_id="s",
        sensitive_refs={"e1"},
        password_values=["s3cr3t"],  # the field's reference changed between the two reads
    )
    pin, note, old = observation.nodes
    assert (pin.value, pin.sensitive) == ("[redacted]", True)
    assert (note.value, note.sensitive) == ("hello", False)
    assert (old.value, old.sensitive) == ("[redacted]", True)
    assert "12345" not in observation.model_dump_json()


def test_an_observation_round_trips_through_json() -> None:
    observation = build_observation(
        tab="admin", url="http://site.test/", snapshot_text=SNAPSHOT, snapshot_id="s"
    )
    again = Observation.model_validate_json(observation.model_dump_json())
    assert again == observation
    assert fingerprint_observation(again) == fingerprint_observation(observation)


# Playwright's own escaping rules (packages/isomorphic/yaml.ts), to check the parser against.
def _needs_quotes(text: str) -> bool:
    checks = (
        not text,
        re.search(r"^\s|\s$", text),
        re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", text),
        text.startswith("-"),
        re.search(r"[\n:](\s|$)", text),
        re.search(r"\s#", text),
        re.search(r"[\n\r]", text),
        re.match(r"[&*\],?!>|@\"'#%]", text),
        re.search(r"[{}`]", text),
        text.startswith("["),
        _is_number(text) or text.lower() in {"y", "n", "yes", "no", "true", "false", "on", "off"},
        text.lower() in {"null", "~"} or re.fullmatch(r"[-+]?\.(inf|nan)", text, re.IGNORECASE),
    )
    return any(bool(c) for c in checks)


def _is_number(text: str) -> bool:
    try:
        return not math.isnan(float(text)) or text.strip().lower() == "nan"
    except ValueError:
        return text.strip() == ""


def _escape_key(key: str) -> str:
    return "'" + key.replace("'", "''") + "'" if _needs_quotes(key) else key


def _escape_value(value: str) -> str:
    if not _needs_quotes(value):
        return value
    out = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    out = out.replace("\r", "\\r").replace("\t", "\\t").replace("\b", "\\b").replace("\f", "\\f")
    out = re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", out)
    return f'"{out}"'


texts = st.text(st.characters(codec="utf-8"), max_size=30)


@given(name=texts, value=texts)
def test_the_parser_reads_back_whatever_playwright_writes(name: str, value: str) -> None:
    key = "button" + (f" {json.dumps(name, ensure_ascii=False)}" if name else "") + " [ref=e1]"
    line = f"- {_escape_key(key)}: {_escape_value(value)}"
    (node,) = parse_aria_snapshot(f"- list [ref=e0]:\n  {line}")[1:]
    assert (node.role, node.name, node.value, node.ref) == ("button", name, value, "e1")


@given(st.text(max_size=300))
def test_the_parser_never_fails_on_odd_text(text: str) -> None:
    parse_aria_snapshot(text)
