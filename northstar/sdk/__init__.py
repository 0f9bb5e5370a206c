"""The SDK a program is written with: ``async def main(nx: northstar.sdk.Session)``.

A program is a Python file with a literal ``PROGRAM = {...}`` declaration (read by the
host without running the file) and an async ``main``. The broker starts it as a child
process (``python -m northstar.sdk.child PATH``); ``connect()`` reaches the host over the
Unix socket in its environment. Every call (``tab(role).click/fill/select/check/press/
goto/upload``, ``check``, ``read``, ``observe``, ``output``, ``report_model_calls``,
``complete``) is carried out and journaled by the host, never here.

May import: ``northstar.errors`` and the standard library. Never Playwright,
``browser_adapters``, the journal or any other part of Northstar: a program reaches the
browser and the journal only through the host.
"""

from northstar.sdk.session import Session, Tab, connect

__all__ = ["Session", "Tab", "connect"]
