"""Read a ``playwright codegen --target python-async`` script as data, without running it.

The script is parsed with ``ast`` and never imported or executed: a recording is someone
else's code. Only the body of its ``async def run(playwright)`` is read, statement by
statement, into plain records (``Call`` chains with literal arguments). The recorder's
boilerplate (launching the browser, opening the context and the first page, closing them)
is recognised and skipped; anything else that is not a call with literal arguments is an
``Unknown`` record that the converter keeps as a comment, so nothing is dropped silently.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from northstar.errors import UsageInvalid

__all__ = [
    "Action",
    "Block",
    "Chain",
    "Link",
    "NewPage",
    "PopupValue",
    "Regex",
    "Skipped",
    "Statement",
    "Unknown",
    "read_script",
]

_FIX = "Give a script written by `playwright codegen --target python-async`."
_BOILERPLATE_CALLS = {"launch", "new_context", "close", "connect", "connect_over_cdp"}


@dataclass(frozen=True, slots=True)
class Regex:
    """A ``re.compile(...)`` argument (kept as its pattern text)."""

    pattern: str


@dataclass(frozen=True, slots=True)
class Link:
    """One ``.name`` or ``.name(args)`` in a chain, with literal arguments only."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: tuple[tuple[str, Any], ...] = ()
    called: bool = False

    def kwarg(self, key: str, default: Any = None) -> Any:
        return dict(self.kwargs).get(key, default)


@dataclass(frozen=True, slots=True)
class Chain:
    """``root.link.link(...)``; ``subject`` is the chain inside ``expect(...)``."""

    root: str
    links: tuple[Link, ...]
    subject: Chain | None = None


@dataclass(frozen=True, slots=True)
class Action:
    """An awaited call: ``await page.get_by_label("Name").fill("Ada")``."""

    line: int
    source: str
    chain: Chain


@dataclass(frozen=True, slots=True)
class Block:
    """``async with page.expect_popup() as info:`` and the statements inside it."""

    line: int
    source: str
    chain: Chain
    alias: str | None
    body: tuple[Statement, ...]


@dataclass(frozen=True, slots=True)
class PopupValue:
    """``page1 = await page1_info.value``: the popup a block waited for gets a name."""

    line: int
    page: str
    info: str


@dataclass(frozen=True, slots=True)
class NewPage:
    """``page = await context.new_page()``: a tab the runner opens."""

    line: int
    page: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """Recorder boilerplate with no meaning for a recipe (launch, context, close)."""

    line: int


@dataclass(frozen=True, slots=True)
class Unknown:
    """A statement the converter has no rule for; it becomes a comment."""

    line: int
    source: str
    reason: str = field(default="no rule for it")


Statement = Action | Block | PopupValue | NewPage | Skipped | Unknown


def read_script(text: str, *, source: str = "<script>") -> tuple[Statement, ...]:
    """The statements of the script's ``run`` function, in order."""
    try:
        module = ast.parse(text, filename=source)
    except SyntaxError as exc:
        raise UsageInvalid(
            f"{source}:{exc.lineno}: not valid Python ({exc.msg})", fix=_FIX
        ) from None
    run = next(
        (n for n in module.body if isinstance(n, ast.AsyncFunctionDef) and n.name == "run"), None
    )
    if run is None:
        raise UsageInvalid(f"{source}: no `async def run(playwright)` function", fix=_FIX)
    lines = text.splitlines()
    return tuple(_statement(node, lines) for node in run.body)


def _statement(node: ast.stmt, lines: list[str]) -> Statement:
    source = _source(node, lines)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Await):
        chain = chain_of(node.value.value)
        if chain is None:
            return Unknown(node.lineno, source, "a call with arguments that are not literals")
        return (
            Skipped(node.lineno) if _is_boilerplate(chain) else Action(node.lineno, source, chain)
        )
    if isinstance(node, ast.Assign):
        return _assignment(node, source)
    if isinstance(node, ast.AsyncWith | ast.With):
        return _block(node, source, lines)
    return Unknown(node.lineno, source)


def _assignment(node: ast.Assign, source: str) -> Statement:
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return Unknown(node.lineno, source)
    name = node.targets[0].id
    value = node.value.value if isinstance(node.value, ast.Await) else node.value
    chain = chain_of(value)
    if chain is None or not chain.links:
        return Unknown(node.lineno, source)
    last = chain.links[-1]
    if last.name == "value" and not last.called and len(chain.links) == 1:
        return PopupValue(node.lineno, name, chain.root)
    if last.name == "new_page":
        return NewPage(node.lineno, name)
    if last.name in _BOILERPLATE_CALLS:
        return Skipped(node.lineno)
    return Unknown(node.lineno, source)


def _block(node: ast.AsyncWith | ast.With, source: str, lines: list[str]) -> Statement:
    header = source.splitlines()[0] if source else ""
    if len(node.items) != 1:
        return Unknown(node.lineno, header)
    item = node.items[0]
    chain = chain_of(item.context_expr)
    alias = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
    if chain is None:
        return Unknown(node.lineno, header)
    body = tuple(_statement(inner, lines) for inner in node.body)
    return Block(node.lineno, header, chain, alias, body)


def chain_of(node: ast.expr) -> Chain | None:
    """``page.get_by_role("button", name="Send").click()`` as a root and its links."""
    links: list[Link] = []
    while True:
        if isinstance(node, ast.Name):
            return Chain(node.id, tuple(reversed(links)))
        if isinstance(node, ast.Attribute):
            links.append(Link(node.attr))
            node = node.value
            continue
        if not isinstance(node, ast.Call):
            return None
        if isinstance(node.func, ast.Name) and node.func.id == "expect" and len(node.args) == 1:
            subject = chain_of(node.args[0])
            return None if subject is None else Chain("expect", tuple(reversed(links)), subject)
        if not isinstance(node.func, ast.Attribute):
            return None
        link = _called(node.func.attr, node)
        if link is None:
            return None
        links.append(link)
        node = node.func.value


def _called(name: str, call: ast.Call) -> Link | None:
    try:
        args = tuple(_literal(arg) for arg in call.args)
        kwargs = tuple((kw.arg, _literal(kw.value)) for kw in call.keywords if kw.arg)
    except ValueError:
        return None
    if len(kwargs) != len(call.keywords):
        return None  # a **mapping argument
    return Link(name, args, kwargs, called=True)


def _literal(node: ast.expr) -> Any:
    """A literal value, or ``re.compile("...")`` as a ``Regex``; anything else is refused."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "compile"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "re"
        and node.args
    ):
        return Regex(str(ast.literal_eval(node.args[0])))
    return ast.literal_eval(node)


def _is_boilerplate(chain: Chain) -> bool:
    """``await context.close()``, ``await browser.close()``: the recorder's own lifetime."""
    return chain.root in ("context", "browser") and chain.links[-1:] == (
        Link("close", called=True),
    )


def _source(node: ast.stmt, lines: list[str]) -> str:
    end = node.end_lineno or node.lineno
    return "\n".join(line.strip() for line in lines[node.lineno - 1 : end])
