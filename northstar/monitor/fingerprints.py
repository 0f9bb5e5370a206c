"""Fingerprints: when two observations show the same state, when two actions are the same.

Two readings of an unchanged tab must compare equal even though Playwright hands out a new
snapshot and may renumber element references, so fingerprints leave out reference ids and
snapshot ids. Two clicks on the same button must compare equal even when they went through
different references, so an action on a reference is described by the role and name of the
element in the observation it came from. Those descriptions are for comparison only: acting
needs a reference from the tab's current observation (``resolve_reference``).

Two fingerprints per observation:

- ``fingerprint_observation``: exact. Tab role, URL, title, frame scope, every meaningful
  node (role, name, value, states, link target), tables and media state.
- ``observation_state_key``: coarse, for "have we been here before". It keeps what a person
  would call the page's state (URL, roles, names, text and states such as checked or
  expanded) and drops what churns while the state stays the same: typed values, focus,
  playback position and clock times in text. A menu opened for the third time has the same
  state key as the first time even though its DOM was rebuilt.

Two more keys serve cycle detection (see ``ObservationDigest``): ``controls_key`` covers the
controls alone (URL, role, name and state of buttons, links, fields...), and ``cycle_key`` is
the state key with the numbers in the page's other text left out. A menu whose page also
shows "Opened 3 times" has a new state key each time it opens, but the same cycle key; the
monitor uses the cycle key only when the controls changed and came back, so a list whose
rows differ only in their numbers is not mistaken for a cycle.

Typed input enters only as a keyed digest (HMAC-SHA256 with a per-process key): a plain
SHA-256 of a short password could be reversed by guessing, and digests are only ever compared
within the process that made them. Input is never case-folded: "Foo" and "foo" differ.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from itertools import compress
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from northstar.errors import StaleReference
from northstar.monitor.observation import (
    CONTROL_ROLES,
    EDITABLE_ROLES,
    NO_STATES,
    ElementRef,
    MediaState,
    Node,
    NodeStates,
    Observation,
)
from northstar.monitor.positions import changed_positions, common_ends
from northstar.recipe.model import PASSIVE_KINDS, Target

__all__ = [
    "ActionRecord",
    "ObservationDigest",
    "TargetDescription",
    "describe_node",
    "describe_recipe_target",
    "digest_observation",
    "digest_typed_input",
    "fingerprint_action",
    "fingerprint_observation",
    "observation_controls_key",
    "observation_cycle_key",
    "observation_state_key",
    "resolve_reference",
]

_INPUT_KEY = secrets.token_bytes(32)
# Clock times and ISO timestamps: they change while a page's state does not.
_CLOCK = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?\b"
)
# Numbers in text that is not a control's: counters ("Opened 3 times"), amounts, ids.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _digest(payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Observations


def _state_words(states: NodeStates) -> tuple[str, ...]:
    """A node's states without focus; cached because pages repeat a few combinations.

    Most nodes share ``NO_STATES``; an identity check spares hashing them.
    """
    return () if states is NO_STATES else _cached_state_words(states)


@functools.lru_cache(maxsize=512)
def _cached_state_words(states: NodeStates) -> tuple[str, ...]:
    return states.labels(include_focus=False)


def _media_exact(item: MediaState) -> tuple[Any, ...]:
    position = None if item.current_time is None else round(item.current_time)
    return (
        item.kind,
        item.name,
        item.src,
        item.loaded,
        item.paused,
        item.ended,
        item.muted,
        position,
    )


def _coarse_text(text: str | None) -> str | None:
    # Both kinds of clock time hold a colon; most text has none and skips the regex.
    return text if text is None or ":" not in text else _CLOCK.sub("<time>", text)


def _without_numbers(text: str | None) -> str | None:
    return None if text is None else _NUMBER.sub("<n>", text)


class _NodeKeys(NamedTuple):
    """One node's part of each key, as text (``repr`` of a tuple: unambiguous, and fast)."""

    exact: str  # depth, role, name, value, link target, states (focus left out)
    coarse: str  # depth, role, name and value without clock times (typed values left out)
    cycle: str  # the coarse part, without numbers unless the node is a control
    control: bool


def _keys_of(node: Node) -> _NodeKeys:
    depth, role, states = len(node.path), node.role, _state_words(node.states)
    control = role in CONTROL_ROLES
    name = _coarse_text(node.name)
    value = None if role in EDITABLE_ROLES else _coarse_text(node.value)
    coarse = repr((depth, role, name, value, states))
    cycle = (
        coarse
        if control
        else repr((depth, role, _without_numbers(name), _without_numbers(value), states))
    )
    exact = repr((depth, role, node.name, node.value, node.url, states))
    return _NodeKeys(exact, coarse, cycle, control)


# A node of an unchanged subtree is the same object in the next observation of its tab
# (``SnapshotReader``), so its keys are kept by identity; the node is held with them, so its
# id cannot be reused while the entry exists. Bounded: cleared when full.
_KEYS_BY_NODE: dict[int, tuple[Node, _NodeKeys]] = {}
_KEYS_HELD = 20_000  # nodes: about ten pages of 2,000


def _node_keys(node: Node) -> _NodeKeys:
    held = _KEYS_BY_NODE.get(id(node))
    if held is not None and held[0] is node:
        return held[1]
    keys = _keys_of(node)
    if len(_KEYS_BY_NODE) >= _KEYS_HELD:
        _KEYS_BY_NODE.clear()
    _KEYS_BY_NODE[id(node)] = (node, keys)
    return keys


class _Sections(NamedTuple):
    """The nodes' parts of each key, joined: what the four keys hash besides the page's URL."""

    exact: str
    coarse: str
    cycle: str
    controls: str


# The sections of a tuple of meaningful nodes, by its identity (shared by the observations of
# an unchanged page); held with the tuple, bounded like the node keys.
_SECTIONS: dict[int, tuple[tuple[Node, ...], _Sections]] = {}
_SECTIONS_HELD = 32


class _KeyLists(NamedTuple):
    """One reading's meaningful nodes and each one's parts of the keys, position by position.

    Never changed once made: the next reading of the tab copies what it keeps.
    """

    nodes: tuple[Node, ...]
    exact: list[str]
    coarse: list[str]
    cycle: list[str]
    control: list[bool]
    joined: _Sections


_NO_KEYS = _KeyLists((), [], [], [], [], _Sections("", "", "", ""))
# The latest key lists of each tab (see ``_positions``); bounded: cleared when full.
_LATEST_KEYS: dict[str, _KeyLists] = {}
_TABS_HELD = 32


def _sections(observation: Observation) -> _Sections:
    nodes = observation.meaningful_nodes
    held = _SECTIONS.get(id(nodes))
    if held is not None and held[0] is nodes:
        return held[1]
    sections = _key_lists(observation.tab, nodes).joined
    if len(_SECTIONS) >= _SECTIONS_HELD:
        _SECTIONS.clear()
    _SECTIONS[id(nodes)] = (nodes, sections)
    return sections


def _key_lists(tab: str, nodes: tuple[Node, ...]) -> _KeyLists:
    """The key lists of ``nodes``, taken from the tab's previous reading where nodes are kept."""
    previous = _LATEST_KEYS.get(tab, _NO_KEYS)
    changed = changed_positions(previous.nodes, nodes)
    lists = _spliced(previous, nodes) if changed is None else _replaced(previous, nodes, changed)
    if len(_LATEST_KEYS) >= _TABS_HELD and tab not in _LATEST_KEYS:
        _LATEST_KEYS.clear()
    _LATEST_KEYS[tab] = lists
    return lists


def _replaced(previous: _KeyLists, nodes: tuple[Node, ...], changed: list[int]) -> _KeyLists:
    """The previous lists with the keys of the ``changed`` positions' new nodes."""
    exact, coarse = previous.exact.copy(), previous.coarse.copy()
    cycle, control = previous.cycle.copy(), previous.control.copy()
    for index in changed:
        keys = _node_keys(nodes[index])
        exact[index], coarse[index], cycle[index], control[index] = keys

    def kept(old: list[Any], new: list[Any]) -> bool:
        return all(old[i] == new[i] for i in changed)

    # A section that no changed position altered is the previous text object (``_hashed``):
    # after a fill, typed values change the exact section alone.
    was, coarse_kept = previous.joined, kept(previous.coarse, coarse)
    joined = _Sections(
        was.exact if kept(previous.exact, exact) else ",".join(exact),
        was.coarse if coarse_kept else ",".join(coarse),
        was.cycle if kept(previous.cycle, cycle) else ",".join(cycle),
        was.controls
        if coarse_kept and kept(previous.control, control)
        else ",".join(compress(coarse, control)),
    )
    return _KeyLists(nodes, exact, coarse, cycle, control, joined)


def _spliced(previous: _KeyLists, nodes: tuple[Node, ...]) -> _KeyLists:
    """The previous lists' common start and end around the keys of the nodes between."""
    start, end = common_ends(previous.nodes, nodes)
    keys = [_node_keys(n) for n in nodes[start : len(nodes) - end]]
    cut = len(previous.nodes) - end
    exact = previous.exact[:start] + [k.exact for k in keys] + previous.exact[cut:]
    coarse = previous.coarse[:start] + [k.coarse for k in keys] + previous.coarse[cut:]
    cycle = previous.cycle[:start] + [k.cycle for k in keys] + previous.cycle[cut:]
    control = previous.control[:start] + [k.control for k in keys] + previous.control[cut:]
    joined = _Sections(
        ",".join(exact), ",".join(coarse), ",".join(cycle), ",".join(compress(coarse, control))
    )
    return _KeyLists(nodes, exact, coarse, cycle, control, joined)


def _hash(*sections: str) -> str:
    """SHA-256 of sections that are ``repr`` texts, which never hold a raw separator."""
    return hashlib.sha256("\x1e".join(sections).encode("utf-8")).hexdigest()


# Digests by the identity of the section they hash, held with it; bounded: cleared when full.
_HASHED: dict[tuple[str, int, tuple[str, ...]], tuple[str, str]] = {}
_HASHED_HELD = 32


def _hashed(before: str, section: str, *after: str) -> str:
    """``_hash(before, section, *after)``, taken as it was while ``section`` is the same text.

    Joined sections that did not change are the previous objects (``_replaced``), so the
    keys that leave typed values out are not hashed again after a fill.
    """
    key = (before, id(section), after)
    held = _HASHED.get(key)
    if held is not None and held[0] is section:
        return held[1]
    digest = _hash(before, section, *after)
    if len(_HASHED) >= _HASHED_HELD:
        _HASHED.clear()
    _HASHED[key] = (section, digest)
    return digest


def _fingerprint(observation: Observation, sections: _Sections) -> str:
    frames = tuple((f.index, f.parent, f.name, f.url) for f in observation.frames)
    tables = tuple((t.name, t.headers, t.rows) for t in observation.tables)
    return _hashed(
        repr((observation.tab, observation.url, observation.title, frames)),
        sections.exact,
        repr(tables),
        repr(tuple(_media_exact(m) for m in observation.media)),
    )


def fingerprint_observation(observation: Observation) -> str:
    """Exact fingerprint of what a tab shows; reference and snapshot ids are left out.

    Focus is left out as well: clicking a button moves focus to it without changing the page.
    The visible text is covered by the nodes it is read from.
    """
    return _fingerprint(observation, _sections(observation))


def _media_coarse(observation: Observation) -> str:
    return repr(tuple((m.kind, m.name, m.src, m.paused, m.muted) for m in observation.media))


def _state_key(observation: Observation, sections: _Sections) -> str:
    where = repr((observation.tab, observation.url))
    return _hashed(where, sections.coarse, _media_coarse(observation))


def _controls_key(observation: Observation, sections: _Sections) -> str:
    where = repr((observation.tab, observation.url))
    return _hashed(where, sections.controls)


def _cycle_key(observation: Observation, sections: _Sections) -> str:
    where = repr((observation.tab, observation.url))
    return _hashed(where, sections.cycle, _media_coarse(observation))


def observation_state_key(observation: Observation) -> str:
    """Coarse key of the page's state: equal for revisits of the same state (module doc)."""
    return _state_key(observation, _sections(observation))


def observation_controls_key(observation: Observation) -> str:
    """Key of the controls alone: URL and each control's role, name, value and states."""
    return _controls_key(observation, _sections(observation))


def observation_cycle_key(observation: Observation) -> str:
    """The state key with numbers left out of text that is not a control's (module doc)."""
    return _cycle_key(observation, _sections(observation))


@dataclass(frozen=True, slots=True)
class ObservationDigest:
    """What the monitor keeps of an observation: its tab, fingerprint and state keys.

    ``cycle_key`` and ``controls_key`` may be left empty (not known): the monitor then
    compares states by ``state_key`` alone.
    """

    tab: str
    fingerprint: str
    state_key: str
    cycle_key: str = ""
    controls_key: str = ""


def digest_observation(observation: Observation) -> ObservationDigest:
    """Every fingerprint of an observation, computed once."""
    sections = _sections(observation)  # once for the four keys
    return ObservationDigest(
        tab=observation.tab,
        fingerprint=_fingerprint(observation, sections),
        state_key=_state_key(observation, sections),
        cycle_key=_cycle_key(observation, sections),
        controls_key=_controls_key(observation, sections),
    )


# References


def resolve_reference(observation: Observation, ref: str | ElementRef) -> Node:
    """The node ``ref`` names in the tab's current observation, or ``StaleReference``.

    A reference from an older snapshot may point at an element that is gone or has changed,
    so it is refused even when the same id exists now; observe again and use the new one.
    """
    if isinstance(ref, ElementRef):
        if ref.snapshot_id != observation.snapshot_id:
            raise StaleReference(
                f"reference {ref.ref!r} belongs to an earlier observation of the tab; "
                "observe the tab again and use a reference from the new observation",
                tab=observation.tab,
            )
        ref = ref.ref
    node = observation.node_for_ref(ref)
    if node is None:
        raise StaleReference(
            f"reference {ref!r} is not in the current observation of the tab; "
            "observe the tab again and use a reference from the new observation",
            tab=observation.tab,
        )
    return node


# Actions


class TargetDescription(_Frozen):
    """The role and name of an action's target: for comparing actions, never for acting.

    ``sensitive`` marks a password field, whose name must not appear in any report.
    """

    role: str
    name: str = ""
    sensitive: bool = False


def describe_node(node: Node) -> TargetDescription:
    """The semantic description of a node, without its reference."""
    return TargetDescription(role=node.role, name=node.name, sensitive=node.sensitive)


def describe_recipe_target(target: Target) -> TargetDescription:
    """A recipe target as a description; locators other than role use their kind as role.

    Scopes (``within``, ``frame``) are left out: the description says what is acted on,
    not where it was looked for.
    """
    if target.role is not None:
        return TargetDescription(role=target.role, name=target.name or "")
    for kind in ("label", "placeholder", "text", "test_id", "css"):
        value = getattr(target, kind)
        if value is not None:
            return TargetDescription(role=kind, name=str(value))
    return TargetDescription(role="unknown")


def digest_typed_input(text: str) -> str:
    """Keyed SHA-256 digest of typed text, a key or a destination; never case-folded."""
    return hmac.new(_INPUT_KEY, text.encode("utf-8"), hashlib.sha256).hexdigest()


class ActionRecord(_Frozen):
    """One step the runner or an agent took on a tab, as the monitor sees it.

    ``executed`` is false for an action that was planned but never dispatched; the monitor
    ignores those. ``input_digest`` is the digest of typed text (see
    ``digest_typed_input``); the record never holds the text itself.
    """

    kind: str = Field(min_length=1)
    tab: str
    url: str = ""
    target: TargetDescription | None = None
    input_digest: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    executed: bool

    @property
    def is_passive(self) -> bool:
        """Passive steps (waits, checks, extraction) change nothing on the page."""
        return self.kind in PASSIVE_KINDS

    @classmethod
    def create(
        cls,
        kind: str,
        *,
        tab: str,
        executed: bool,
        url: str = "",
        target: TargetDescription | None = None,
        typed: str | None = None,
    ) -> ActionRecord:
        """A record whose typed input (text, key or destination) is digested here."""
        digest = None if typed is None else digest_typed_input(typed)
        return cls(
            kind=kind, tab=tab, url=url, target=target, input_digest=digest, executed=executed
        )

    @classmethod
    def on_reference(
        cls,
        kind: str,
        observation: Observation,
        ref: str | ElementRef,
        *,
        executed: bool,
        typed: str | None = None,
    ) -> ActionRecord:
        """A record for an action on a reference, described by its node in ``observation``.

        Raises ``StaleReference`` when the reference is not in that observation.
        """
        node = resolve_reference(observation, ref)
        target = describe_node(node)
        return cls.create(
            kind,
            tab=observation.tab,
            url=observation.url,
            target=target,
            typed=typed,
            executed=executed,
        )


def fingerprint_action(action: ActionRecord) -> str:
    """Fingerprint of what an action does: tab, kind, page URL, target and typed input."""
    target = action.target
    return _digest(
        [
            action.tab,
            action.kind,
            action.url,
            None if target is None else [target.role, target.name],
            action.input_digest,
        ]
    )
