"""The MCP server: the agent path's way in (``northstar mcp``), programs first.

Owns:

- ``server``: ``build_server`` (the tool groups on the SDK's ``MCPServer``), and serving
  it over stdio or streamable HTTP.
- ``program_tools``: ``list_programs``, ``describe_program``, ``call_program``,
  ``reconcile_run``, ``resume_run``: stored recipes as one tool call each, run through
  ``northstar.composition`` (the same journaled run as ``northstar run``).
- ``status_tools``: ``run_status``, a reader (``northstar.readers`` only; no credential).
- ``explore_tools``: ``open_session``, ``observe``, ``act``, ``check``, ``close_session``:
  the agent sessions (``northstar.agent``), one ``AgentHost`` call each, for when no
  program fits; sessions still open close when the server stops.
- ``catalogue`` and ``descriptions``: the recipes in the server's folders, as compact data.
- ``requests``: a call's inputs checked like the CLI's, into a ``RunRequest``.
- ``shared_browser``: the server's one browser, launched on first use.
- ``http_access``: loopback by default and a bearer token over HTTP.
- ``tool_results``: structured answers, and the CLI's coded line for an expected error.

May import: ``northstar.agent``, ``northstar.composition`` and everything below them,
``northstar.readers`` and the ``mcp`` SDK (the ``mcp`` extra). Never another front end
(``cli``, ``cases``) and never ``browser_adapters`` (a browser comes from
``northstar.composition.open_host``).
Each tool group has its own ``register_tools(server, ...)``; ``server.build_server``
calls them, the program tools first.
"""

__all__: list[str] = []  # import from the modules: the SDK loads only when a server starts
