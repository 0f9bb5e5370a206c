"""How long an agent's calls may wait, and how much of a page an answer may hold."""

from __future__ import annotations

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
