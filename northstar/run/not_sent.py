"""Whether a submission that did not verify was never sent (``NOT_SENT``), as a plain rule.

A submit step whose expectations failed is ``unknown`` unless the browser shows nothing
could have been sent: no request by a method other than GET/HEAD/OPTIONS left any page of
the context after the action, and the page either shows the browser's validation message
(a ``required`` field, a pattern) or did not load another document. Then the iteration is
``failed`` with ``NOT_SENT``: safe, because resending cannot make a second copy.
"""

from __future__ import annotations

from northstar.browser.protocol import SendTrace
from northstar.errors import NotSent

__all__ = ["not_sent"]


def not_sent(trace: SendTrace, step_id: str) -> NotSent | None:
    """``NOT_SENT`` naming the validation message (or the page that stayed), else ``None``."""
    if trace.changing_requests:
        return None
    if trace.validation is not None:
        return NotSent(
            f"submission {step_id} was not sent: the browser refused the form "
            f"({trace.validation}); no request left the page"
        )
    if not trace.navigated:
        return NotSent(f"submission {step_id} was not sent: no request left the page and it stayed")
    return None
