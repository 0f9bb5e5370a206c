"""Who may reach the server over HTTP: a loopback address unless asked, and a bearer token.

Anyone who can reach the HTTP endpoint can run the stored programs in this machine's
browser, so ``--http`` listens on loopback by default, and a non-loopback host is refused
unless the person also passes ``--allow-remote``. Every request must carry
``Authorization: Bearer TOKEN``: the token is ``$NORTHSTAR_MCP_TOKEN`` when set, else
generated at start and printed once to stderr. The check is the SDK's own bearer
middleware (``token_verifier`` + ``AuthSettings``) with a verifier that compares against
the one static token in constant time; a request without it gets 401.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from mcp.server.auth.provider import AccessToken

from northstar.errors import UsageInvalid

__all__ = [
    "TOKEN_ENV",
    "HttpAddress",
    "StaticTokenVerifier",
    "is_loopback",
    "parse_http_address",
    "server_token",
]

TOKEN_ENV = "NORTHSTAR_MCP_TOKEN"
MIN_TOKEN_LENGTH = 16


@dataclass(frozen=True)
class HttpAddress:
    host: str
    port: int

    def url(self, path: str = "") -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def _split(text: str) -> tuple[str, str]:
    """``HOST:PORT``, ``[V6]:PORT`` or a bare ``PORT`` (loopback)."""
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
        return (host, port) if sep else ("", "")
    host, sep, port = text.rpartition(":")
    return (host, port) if sep else ("127.0.0.1", text)


def parse_http_address(text: str, *, allow_remote: bool = False) -> HttpAddress:
    """The address to listen on; a non-loopback host only with ``allow_remote``."""
    host, port = _split(text.strip())
    if not host or not port.isdigit() or int(port) > 65535:
        raise UsageInvalid(
            f"--http {text!r} is not HOST:PORT",
            fix="Write --http 127.0.0.1:8765 (port 0 picks a free one).",
        )
    if not is_loopback(host) and not allow_remote:
        raise UsageInvalid(
            f"--http {text} would accept connections from other machines",
            fix="Use 127.0.0.1:PORT, or add --allow-remote if that is what you mean.",
        )
    return HttpAddress(host, int(port))


def server_token(environ: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """``(token, generated)``: ``$NORTHSTAR_MCP_TOKEN`` if set, else a new random one."""
    given = (os.environ if environ is None else environ).get(TOKEN_ENV, "")
    if not given:
        return secrets.token_urlsafe(32), True
    if len(given) < MIN_TOKEN_LENGTH:
        raise UsageInvalid(
            f"${TOKEN_ENV} is shorter than {MIN_TOKEN_LENGTH} characters",
            fix=f"Use a long random token, or unset ${TOKEN_ENV} to have one generated.",
        )
    return given, False


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one static token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id="northstar-mcp-host", scopes=[])
