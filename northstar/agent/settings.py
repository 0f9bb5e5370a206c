"""How long an agent's calls may wait, how much of a page an answer may hold, and where
its uploads may come from."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentSettings"]


class AgentSettings(BaseModel):
    """Defaults of the agent path; a call's own ``timeout_ms`` wins over them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    open_timeout_ms: int = Field(30_000, ge=1, le=600_000)  # loading a tab's start page
    action_timeout_ms: int = Field(10_000, ge=1, le=600_000)  # Playwright's auto-waiting
    check_timeout_ms: int = Field(5_000, ge=1, le=600_000)
    max_page_lines: int = Field(600, ge=10, le=100_000)  # lines of a whole-page answer
    max_changes: int = Field(40, ge=1, le=10_000)  # items of a what-changed answer
    # The one folder an agent's uploads may come from (``northstar mcp --files DIR``); a
    # relative path is read from it. None: an agent uploads nothing.
    files_dir: Path | None = None
