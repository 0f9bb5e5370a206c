"""Each lint rule on a small recipe: its code, where it points (line:column) and the better
form it derives; and the recipes where it stays silent."""

from __future__ import annotations

from northstar.lint.files import format_warning, lint_recipe
from northstar.lint.rules import CODES, LintContext
from northstar.recipe.loader import parse_recipe_positions

HEAD = """\
name: sample
params:
  title: {type: string, required: true}
  token: {type: string, secret: true, required: true}
tabs:
  site: {start: "{{ base_url }}/form"}
steps:
"""
USES = """\
  - id: uses
    tab: site
    fill: {target: {label: Title}, value: "{{ title }} {{ token }}"}
"""


def lines(steps: str, context: LintContext | None = None, head: str = HEAD) -> list[str]:
    recipe, positions = parse_recipe_positions(head + USES + steps, source="r.yaml")
    found = lint_recipe(recipe, positions, source="r.yaml", context=context)
    return [format_warning(w) for w in found]


def test_a_clean_recipe_has_no_warnings() -> None:
    assert lines("") == []


def test_css_with_a_test_id_names_the_test_id_target() -> None:
    found = lines('  - {id: a, tab: site, click: {target: {css: "[data-testid=save]"}}}\n')
    assert found == [
        "r.yaml:11:41: LINT_CSS_TARGET target '[data-testid=save]' is CSS (better: {test_id: save})"
    ]


def test_a_positional_selector_is_its_own_warning() -> None:
    found = lines('  - {id: a, tab: site, click: {target: {css: "tr:nth-child(3) a"}}}\n')
    assert len(found) == 1
    assert found[0].startswith("r.yaml:11:41: LINT_POSITION_TARGET target 'tr:nth-child(3) a'")
    assert "within:" in found[0]


def test_a_loose_target_in_a_text_check_gets_the_whole_text() -> None:
    step = (
        "  - id: a\n    tab: site\n    verify_outcome:\n"
        '      text: {target: {text: "Page 1", exact: false}, equals: "Page 1 of 10"}\n'
    )
    assert lines(step) == [
        'r.yaml:14:39: LINT_LOOSE_TARGET text "Page 1" (substring, any case) matches any '
        "element whose text contains it (better: {text: Page 1 of 10})"
    ]


def test_a_submit_without_reconcile_is_offered_its_expectation_as_probe() -> None:
    step = (
        "  - id: send\n    tab: site\n    click: {target: {role: button, name: Send}}\n"
        "    effect: submit\n    expect:\n      - url: '**/thanks'\n"
        "      - visible: {role: heading, name: Thanks}\n"
    )
    (found,) = lines(step)
    assert found.startswith("r.yaml:14:5: LINT_SUBMIT_WITHOUT_RECONCILE submit step 'send'")
    assert "{check: {visible: {role: heading, name: Thanks}}}" in found


def test_a_submit_checked_only_by_url_is_offered_done_when() -> None:
    step = (
        "  - id: send\n    tab: site\n    click: {target: {role: button, name: Send}}\n"
        "    effect: submit\n    expect: [{url: '**/thanks'}]\n"
        "    reconcile: [{check: {url: '**/thanks'}}]\n"
        "done_when:\n  - {tab: site, visible: {role: status, name: Sent}}\n"
    )
    (found,) = lines(step)
    assert found == (
        "r.yaml:15:5: LINT_URL_ONLY_EXPECT submit step 'send' checks only the URL: an error "
        "page at that URL passes (better: add {visible: {role: status, name: Sent}})"
    )


def test_a_secret_in_a_url_is_found_in_a_goto() -> None:
    found = lines('  - {id: a, tab: site, goto: "/search?q={{ token }}"}\n')
    assert len(found) == 1
    assert found[0].startswith("r.yaml:11:24: LINT_SECRET_IN_URL secret 'token' is in a URL")
    assert 'value: "{{ token }}"' in found[0]


def test_an_unused_parameter_points_at_its_declaration() -> None:
    head = HEAD.replace("steps:\n", "").replace("tabs:", "  spare: {type: string}\ntabs:")
    found = lines("", head=head + "steps:\n")
    assert found == [
        "r.yaml:5:3: LINT_UNUSED_PARAM parameter 'spare' is used by no template "
        "(better: use it as {{ spare }}, or remove params.spare)"
    ]


def test_a_url_on_another_origin_of_a_tab_with_one_origin() -> None:
    step = '  - {id: a, tab: site, goto: "https://pay.example.test/checkout"}\n'
    (found,) = lines(step)
    assert found == (
        "r.yaml:11:24: LINT_TAB_ORIGIN tab 'site' may visit only {{ base_url }} (its start "
        "URL's origin), not https://pay.example.test (better: tabs.site.origins: "
        '["{{ base_url }}", "https://pay.example.test"])'
    )
    origins = '/form", origins: ["{{ base_url }}", "https://pay.example.test"]}'
    listed = HEAD.replace('/form"}', origins)
    assert lines(step, head=listed) == []


def test_large_page_lookups_only_with_a_recorded_page_size() -> None:
    step = "  - {id: a, tab: site, click: {target: {role: button, name: Save}}}\n"
    assert lines(step) == []
    assert lines(step, LintContext(page_sizes={"site": 200})) == []
    (found,) = lines(step, LintContext(page_sizes={"site": 4000}))
    assert found.startswith('r.yaml:11:32: LINT_LARGE_PAGE_LOOKUP button "Save" is looked up')
    assert "{role: button, name: Save, within: {role: form, name: ...}}" in found
    scoped = "  - {id: a, tab: site, click: {target: {test_id: save}}}\n"
    assert lines(scoped, LintContext(page_sizes={"site": 4000})) == []


def test_every_code_is_documented_in_the_lint_guide() -> None:
    from tests.conftest import REPO

    guide = (REPO / "docs" / "how-to" / "lint.md").read_text(encoding="utf-8")
    assert [code for code in CODES if f"`{code}`" not in guide] == []
