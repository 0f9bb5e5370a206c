"""Running the async adapter on a page of Playwright's sync API, in the sync API's own loop.

Northstar has one implementation, async. A sync Playwright object wraps the same
implementation object an async one would, and the sync API runs an event loop of its own
in the calling thread, switched to with a greenlet while a call waits. ``run_on_sync_page``
therefore wraps the sync page's implementation in the async API and runs a coroutine as a
sync call does (``SyncBase._sync``): nothing is written twice, and the page, its context
and its browser stay the sync test's.

One adjustment to Playwright's internals makes this possible: both APIs cache their
wrapper of an implementation object under the same attribute, so the async API would hand
back the sync wrappers (a sync ``BrowserContext`` from ``async_page.context``). The async
mapping is given an attribute of its own (``separate_async_wrappers``), once, before
the pytest plugin's first async object; an async-only program sees no difference. This
module relies on Playwright's private names (pinned by ``playwright>=1.65,<1.66``); its
test runs a recipe on a sync page (``tests/cases/test_pytest_playwright.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from playwright._impl import _async_base
from playwright._impl._impl_to_api_mapping import ImplToApiMapping
from playwright.async_api import Page as AsyncPage
from playwright.sync_api import Page as SyncPage

__all__ = ["is_sync_page", "run_on_sync_page", "separate_async_wrappers"]

T = TypeVar("T")

_ASYNC_ATTR = "_northstar_async_api_instance_"


def is_sync_page(page: object) -> bool:
    return isinstance(page, SyncPage)


def run_on_sync_page(page: SyncPage, work: Callable[[AsyncPage], Coroutine[Any, Any, T]]) -> T:
    """Run ``work`` on the async twin of ``page``, blocking like any sync Playwright call."""
    __tracebackhide__ = True
    separate_async_wrappers()
    twin: AsyncPage = _async_base.mapping.from_impl(page._impl_obj)
    result: T = page._sync(work(twin))
    return result


class _AsyncMapping(ImplToApiMapping):
    """The async API's mapping, caching its wrappers under an attribute of its own."""

    def from_maybe_impl(self, obj: Any, visited: Any = None) -> Any:
        api_class = self._mapping.get(getattr(obj, "_api_impl_class", type(obj)))
        if not obj or isinstance(obj, dict | list) or api_class is None:
            return super().from_maybe_impl(obj, visited)
        wrapper = getattr(obj, _ASYNC_ATTR, None)
        if wrapper is None:
            wrapper = api_class(obj)
            setattr(obj, _ASYNC_ATTR, wrapper)
        return wrapper


def separate_async_wrappers() -> None:
    """Give the async API its own wrapper cache; call it before async objects exist.

    A wrapper made before the switch is not found after it (a second one is made), so
    the pytest plugin calls this before launching the cases' browser, too.
    """
    mapping = _async_base.mapping
    if not isinstance(mapping, _AsyncMapping):
        mapping.__class__ = _AsyncMapping  # the generated API holds this very object
