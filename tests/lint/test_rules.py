"""Each lint rule on a small recipe: its code, where it points (line:column) and the better
form it derives; the recipes where it stays silent; which codes are selected; noqa."""

from __future__ import annotations

from pathlib import Path

import pytest

from northstar.errors import UsageInvalid
from northstar.lint.files import Selection, format_warning, lint_file, lint_recipe
from northstar.lint.rules import CODES, DEFAULT_CODES, LintContext, LiveElement
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


def lines(
    steps: str,
    context: LintContext | None = None,
    head: str = HEAD,
    selection: Selection | None = None,
) -> list[str]:
    recipe, positions = parse_recipe_positions(head + USES + steps, source="r.yaml")
    found = lint_recipe(recipe, positions, source="r.yaml", context=context, selection=selection)
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


def test_a_substring_check_or_read_of_a_confirmation_is_not_flagged() -> None:
    step = (
        "  - id: a\n    tab: site\n    verify_outcome:\n"
        '      visible: {text: "Submission #", exact: false}\n'
        "  - id: b\n    tab: site\n    extract:\n"
        '      {as: number, target: {text: "Submission #", exact: false}, regex: "#([0-9]+)"}\n'
    )
    assert lines(step) == []


def test_an_action_on_a_loose_target_gets_the_whole_text() -> None:
    step = '  - {id: a, tab: site, click: {target: {role: link, name: "Page 2", exact: false}}}\n'
    assert lines(step) == [
        'r.yaml:11:69: LINT_LOOSE_TARGET link "Page 2" (substring, any case) acts on any '
        "element whose text contains it (better: the element's whole text or name with "
        "`exact: true` (the default), or a test_id)"
    ]


def test_css_on_a_text_field_suggests_a_textbox_and_on_a_box_a_checkbox() -> None:
    steps = (
        '  - {id: a, tab: site, fill: {target: {css: "#email"}, value: x}}\n'
        '  - {id: b, tab: site, check: {target: {css: "form .agree"}}}\n'
    )
    fill, check = lines(steps)
    assert fill.startswith(
        "r.yaml:11:40: LINT_CSS_TARGET target '#email' is CSS (better: a textbox:"
    )
    assert "{role: textbox, name: <its label>}" in fill
    assert "(better: a checkbox: {role: checkbox, name: <its label>}" in check


def test_css_read_on_a_live_page_suggests_its_role_and_name() -> None:
    steps = (
        '  - {id: a, tab: site, fill: {target: {css: "#email"}, value: x}}\n'
        '  - {id: b, tab: site, check: {target: {css: "form .agree"}}}\n'
    )
    live = {
        "#email": LiveElement("textbox", "Email"),
        "form .agree": LiveElement("checkbox", "Agree to terms"),
    }
    fill, check = lines(steps, LintContext(live=live))
    assert fill.endswith("(better: {role: textbox, name: Email})")
    assert check.endswith("(better: {role: checkbox, name: Agree to terms})")


def test_a_submit_without_reconcile_is_offered_its_expectation_as_probe() -> None:
    step = (
        "  - id: send\n    tab: site\n    click: {target: {role: button, name: Send}}\n"
        "    effect: submit\n    expect:\n      - url: '**/thanks'\n"
        "      - visible: {role: heading, name: Thanks}\n"
    )
    assert lines(step) == []  # not a default rule: many sites have no page to probe
    (found,) = lines(step, selection=Selection.of(["LINT_SUBMIT_WITHOUT_RECONCILE"]))
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


def test_every_code_is_documented_with_an_example() -> None:
    from tests.conftest import REPO

    page = (REPO / "docs" / "how-to" / "lint.md").read_text(encoding="utf-8")
    sections = {code: page.split(f"### `{code}`")[1].split("###")[0] for code in CODES}
    assert [code for code, text in sections.items() if "```yaml" not in text] == []


def test_selection_select_all_and_ignore() -> None:
    assert Selection.of().codes == DEFAULT_CODES
    assert "LINT_SUBMIT_WITHOUT_RECONCILE" not in DEFAULT_CODES
    assert Selection.of(["ALL"]).codes == set(CODES)
    assert Selection.of(["ALL"], ["LINT_CSS_TARGET"]).codes == set(CODES) - {"LINT_CSS_TARGET"}
    assert Selection.of(["LINT_UNUSED_PARAM"]).codes == {"LINT_UNUSED_PARAM"}
    with pytest.raises(UsageInvalid, match="unknown lint code 'LINT_CSS'"):
        Selection.of(ignore=["LINT_CSS"])


def test_noqa_silences_its_own_line_only(tmp_path: Path) -> None:
    step = '  - {id: %s, tab: site, click: {target: {css: "#%s"}}}'
    steps = (
        f"{step % ('a', 'a')}  # northstar: noqa[LINT_CSS_TARGET]\n"
        f"{step % ('b', 'b')}  # northstar: noqa[LINT_UNUSED_PARAM]\n"
        f"{step % ('c', 'c')}  # northstar: noqa\n"
        f"{step % ('d', 'd')}\n"
    )
    (tmp_path / "r.yaml").write_text(HEAD + USES + steps, encoding="utf-8")
    found = [w.finding.path for w in lint_file(tmp_path / "r.yaml")]
    assert found == ["steps[2].click.target.css", "steps[4].click.target.css"]


def test_a_submit_verified_only_by_its_form_fields_is_told_to_check_a_server_page() -> None:
    step = (
        "  - id: send\n    tab: site\n    click: {target: {role: button, name: Send}}\n"
        "    effect: submit\n    expect: [{value: {target: {label: Name}, equals: Ada}}]\n"
        "  - id: again\n    tab: site\n    verify_field: {target: {label: Name}, equals: Ada}\n"
    )
    (found,) = lines(step)
    assert found.startswith(
        "r.yaml:15:5: LINT_FORM_ONLY_VERIFY submit step 'send' is verified only by the "
        "form's own fields"
    )
    assert "a page the server produced" in found


def test_a_submit_also_verified_on_a_server_page_is_not_flagged() -> None:
    step = (
        "  - id: send\n    tab: site\n    click: {target: {role: button, name: Send}}\n"
        "    effect: submit\n    expect: [{value: {target: {label: Name}, equals: Ada}}]\n"
        "  - id: listed\n    tab: site\n    verify_outcome: {visible: {role: link, name: Ada}}\n"
    )
    assert lines(step) == []
