"""The agent path's exploration half: sessions an agent drives through the host.

A plain async Python API, independent of MCP; a server (``northstar.mcp``) wraps each
call below as one tool. Open one with ``open_agent_host`` (it owns a journal and a
browser host) or build ``AgentHost(host, journal)`` on ones you own.

The calls (each returns a frozen answer whose ``text`` is ready for a model's context):

``open_session(tabs, state=None)`` -> ``SessionOpened``
    ``tabs = {"role": {"start": URL, "origins": [URL, ...]}}``. One browser context of its
    own on the shared browser, each role's tab opened at ``start`` and confined to its
    ``origins`` exactly as a recipe's tab role (default: the start URL's origin); made from
    ``state``, a signed-in state saved by ``northstar sign-in``, when given. Returns
    ``session_id`` and ``credential``: random, shown only here, only its hash is kept.
    Every later call presents both (``CREDENTIALS_INVALID`` otherwise).
``close_session(session_id, credential)`` -> ``SessionClosed``
``observe(session_id, credential, tab, full=False)`` -> ``ObserveAnswer``
    The page as compact text with element references (``[ref=e12]``): the whole page the
    first time, on another URL or document, or with ``full=True``; otherwise only what
    changed since the tab's previous observation, with the references of what appeared
    or changed.
``act(session_id, credential, tab, action, ref=None, target=None, value=None,
submit=False, key=None, timeout_ms=None)`` -> ``ActAnswer``
    ``click``, ``fill``, ``select``, ``check``, ``uncheck``, ``hover``, ``press``,
    ``upload`` or ``goto``, on a ``ref`` of the tab's latest observation or a recipe
    ``target``; then the tab is observed again and the answer says what changed. A
    reference that is not in the latest observation is ``STALE_REFERENCE`` naming what
    it was; leaving the tab's origins is ``ORIGIN_BLOCKED``. ``submit=True`` journals
    the action as a submission (in flight, durably, before it is sent): the same call
    again, or the same ``key``, returns the first answer and sends nothing; the same
    ``key`` with other inputs is ``IDEMPOTENCY_CONFLICT``.
``tabs(session_id, credential)`` -> ``TabsAnswer``
    The open tab roles, the URL each showed last and the role that opened it. A popup
    or new tab an action opens becomes a role (``popup-1``, ...; gated by its opener's
    origins from its first request), named in the ``ActAnswer``'s ``tabs_opened``; a tab
    that closes itself is in ``tabs_closed`` and the answer shows its opener's change.
``check(session_id, credential, tab, check, timeout_ms=None)`` -> ``CheckAnswer``
    A recipe check (``{"visible": {"role": "heading", "name": "Thanks"}}``, ``url``,
    ``text``...), waited for; passive, so the monitor does not count it as an action.

``save_recipe(session_id, credential, name, params=None, overwrite=False)`` -> ``RecipeSaved``
    The session's executed, successful actions as ``recipes/NAME.yaml`` (``AgentHost``'s
    ``recipes`` folder): targets by role and name, typed values as parameters (a
    sensitive field's as a ``secret`` one, its value never kept), expectations from what
    each action visibly caused. Answers the path, the definition hash and the YAML; see
    ``northstar.agent.recipe_draft``.

Every ``observe``, ``act`` and ``check`` answer carries the session's BehaviorMonitor
signal when one stands (``signal``, and a line in ``text``): counts and guidance only,
advice that never blocks, completes or fails anything. Every expected failure is a
``NorthstarError`` with a stable code.

``northstar.agent.session.SessionCore`` is the shared core of a session that acts through
the host: an agent's session holds one, and so does a program's iteration
(``northstar.programs``). Its actions go through the host's one dispatch routine
(``northstar.run.dispatch``) and its submissions through the journal's one rule
(``northstar.journal.submissions``).

May import: the core (the run engine's dispatch and recorder included),
``northstar.composition``. Never ``browser_adapters`` (the composition root wires it in)
or another front end.
"""

from northstar.agent.answers import (
    ActAnswer,
    CheckAnswer,
    ObserveAnswer,
    RecipeSaved,
    SessionClosed,
    SessionOpened,
    TabsAnswer,
)
from northstar.agent.host import AgentHost, open_agent_host
from northstar.agent.settings import AgentSettings

__all__ = [
    "ActAnswer",
    "AgentHost",
    "AgentSettings",
    "CheckAnswer",
    "ObserveAnswer",
    "RecipeSaved",
    "SessionClosed",
    "SessionOpened",
    "TabsAnswer",
    "open_agent_host",
]
