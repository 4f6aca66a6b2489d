"""Round 25 of hostile spec trees for the offline commands, each the case gsg mishandled before, with its
neighbours, grouped by class."""

from __future__ import annotations

import json

import pytest
from support import FLEET, REPO

TEMPLATES = str(REPO / "templates")
TAGGED = "name: a\nreplicas: !!binary aGk=\n"  # one GSG001 at 2:11, whatever the file is called
TAG_MESSAGE = ("error GSG001 yaml-syntax: YAML tag '!!binary' is not supported: gsg files hold plain strings, numbers, "
               "true/false, null, lists and mappings (remove the tag, or quote the value)")

# --- file names: the file system's text, escaped in every line that shows it ------------------------------------


@pytest.mark.parametrize("name,shown", [
    ("a\nb.yaml", "a\\nb.yaml"),  # a forged line of its own before
    ("a\rb.yaml", "a\\rb.yaml"),  # the terminal's cursor went back over the path before
    ("a\x1b[2Jb.yaml", "a\\x1b[2Jb.yaml"),
    ("a\u202eb.yaml", "a\\u202eb.yaml"),
    ("a b.yaml", "a b.yaml"),  # printable names stay as they are
])
def test_a_file_name_with_a_line_break_or_control_is_one_escaped_line(gsg, tmp_path, name, shown):
    """A spec file called `a<newline>b.yaml` printed its finding on two lines (`specs/a` and `b.yaml:2:11: ...`),
    so that a file name could forge a finding line or hide one; the file of a location is escaped now, as a
    message's text was already."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / name).write_text(TAGGED)
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    assert result.code == 1
    assert result.out.splitlines() == [f"specs/{shown}:2:11: {TAG_MESSAGE}"]


def test_json_keeps_the_file_name_as_it_is(gsg, tmp_path):
    """The neighbour: a machine reader gets the path itself (JSON escapes the newline its own way)."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a\nb.yaml").write_text(TAGGED)
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", "-o", "json", cwd=tmp_path)
    assert [f["file"] for f in json.loads(result.out)["findings"]] == ["specs/a\nb.yaml"]


@pytest.mark.parametrize("name,where", [
    ("a\nb.yaml", "[specs/a\\nb.yaml:2:11](specs/a%0Ab.yaml#L2)"),  # the row was cut in two
    ("a|b.yaml", "[specs/a\\|b.yaml:2:11](specs/a%7Cb.yaml#L2)"),  # a column of its own
    ("a](x)b.yaml", "[specs/a\\](x)b.yaml:2:11](specs/a%5D%28x%29b.yaml#L2)"),  # the link ended early
    ("a.yaml", "[specs/a.yaml:2:11](specs/a.yaml#L2)"),
])
def test_a_markdown_row_holds_the_file_whatever_its_name(gsg, tmp_path, name, where):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / name).write_text(TAGGED)
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", "-o", "markdown", cwd=tmp_path)
    rows = [line for line in result.out.splitlines() if line.startswith("| ❌")]
    assert rows == [f"| ❌ | `GSG001` yaml-syntax | {where} |  | {TAG_MESSAGE.split(': ', 1)[1]} |  |"]


# --- template variables: a line break in a value writes lines of the template's output -------------------------

SPEC = (REPO / "specs" / "llama-8b.yaml").read_text()


def _with_kv_dtype(tmp_path, value: str) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC.replace("    kv_cache_dtype: auto", f"    kv_cache_dtype: {value}"))


@pytest.mark.parametrize("escape,code", [("\\n", "000A"), ("\\r", "000D"), ("\\N", "0085"), ("\\L", "2028"),
                                         ("\\P", "2029")])
def test_a_template_variable_holding_a_line_break_is_refused(gsg, tmp_path, escape, code):
    """`kv_cache_dtype: "auto\\n  - --gpu-memory-utilization=0.99"` wrote a pinned argument of its own into the
    template's YAML: render gave --gpu-memory-utilization=0.99 in place of the 0.85 the spec's vars pin, and no
    pinned-conflict was reported. Every line break YAML 1.1 reads (LF, CR, NEL, LS, PS) is GSG011 at the value."""
    _with_kv_dtype(tmp_path, f'"auto{escape}  - --gpu-memory-utilization=0.99"')
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", "--templates", TEMPLATES, cwd=tmp_path)
    assert result.code == 1
    assert result.out.splitlines() == [
        f"specs/a.yaml:19:21: error GSG011 template [llama-8b]: guard.vars.kv_cache_dtype holds a line break "
        f"(U+{code}): template 'vllm-hardened' writes it into YAML text, where it would start a line of its own (an "
        "argument or key the template does not write)",
        "    fix: write the value on one line (several values: a YAML list)"]
    rendered = gsg("render", "specs", "--offline", "--templates", TEMPLATES, cwd=tmp_path)
    assert rendered.code == 1 and "0.99" not in rendered.out


def test_a_line_break_deep_in_a_variable_or_in_a_key_is_refused_at_its_place(gsg, tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(SPEC.replace(
        "    kv_cache_dtype: auto", '    kv_cache_dtype: auto\n    extra: {a: [ok, "x\\ny"], "k\\nk": 1}\n    "v\\nv": 2'))
    result = gsg("validate", "specs", "--fleet", str(FLEET), "--offline", "--templates", TEMPLATES, cwd=tmp_path)
    lines = [line.split(": error GSG011 template [llama-8b]: ")
             for line in result.out.splitlines() if "GSG011" in line]
    assert [(where, text.split(" holds")[0]) for where, text in lines] == [
        ("specs/a.yaml:20:21", "guard.vars.extra.a.1"), ("specs/a.yaml:20:30", "guard.vars.extra.k\\nk"),
        ("specs/a.yaml:21:5", "guard.vars.v\\nv")]


@pytest.mark.parametrize("value", ["auto", '"auto"', ">-\n      auto", "'auto '"])
def test_a_one_line_template_variable_renders(gsg, tmp_path, value):
    """The neighbours: quoted, folded (`>-` joins its lines) or padded, a one-line value is no GSG011."""
    _with_kv_dtype(tmp_path, value)
    result = gsg("render", "specs", "--offline", "--templates", TEMPLATES, cwd=tmp_path)
    assert result.code == 0 and "- --gpu-memory-utilization=0.85\n" in result.out


# --- template output: what the YAML a template renders holds besides one mapping of text --------------------------

TEMPLATED = ("name: a\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\nbackend: vLLM\n"
             "backend_version: 0.11.0\ngpu_selector:\n  gpu_ids: [gpu-a:cuda:0]\nguard:\n  template: t\n")


def _render_with(gsg, tmp_path, template: str):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(TEMPLATED)
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "t.yaml.j2").write_text(template)
    return gsg("render", "specs", "--offline", "--templates", "tpl", cwd=tmp_path)


@pytest.mark.parametrize("template,says", [
    # 'internal error: UnicodeEncodeError' (exit 3, no line) when the report was written
    ('pinned: [--served-model-name={{ "\\ud800" }}]', "rendered template holds U+D800, half of a surrogate pair and "
     "no character: it cannot be written as UTF-8"),
    ('pinned: []\nenv: {A: "{{ "\\udc80" }}"}', "rendered template holds U+DC80, half of a surrogate pair and no "
     "character: it cannot be written as UTF-8"),
    # the second document's arguments were dropped unread
    ("pinned: [--max-num-seqs=8]\n---\npinned: [--max-num-seqs=64]\n", "rendered template holds 2 YAML documents (a "
     "`---` line); a template renders one mapping"),
    # env values and names were Python's str() of what YAML read: 'True', 'None', '[1]', '3'
    ("pinned: []\nenv: {VLLM_USE_V1: true}", "template env.VLLM_USE_V1 renders the boolean true, not text: quote it "
     "in the template"),
    ("pinned: []\nenv: {A: ~}", "template env.A renders null, not text: quote it in the template"),
    ("pinned: []\nenv: {A: [1]}", "template env.A renders a list ([1]), not text: quote it in the template"),
    ("pinned: []\nenv: {A: 2024-01-01}", "template env.A renders a date (2024-01-01), not text: quote it in the "
     "template"),
    ("pinned: []\nenv: {3: x}", "template env renders a name that is a number (3), not text: quote it in the "
     "template"),
    ("pinned: [--enforce-eager, false]", "template pinned[1] renders the boolean false, not text: quote it in the "
     "template"),
    ("pinned: []\ndefaults: [{a: 1}]", "template defaults[0] renders a mapping ({'a': 1}), not text: quote it in the "
     "template"),
])
def test_a_template_rendering_more_than_one_mapping_of_text_is_one_gsg011_line(gsg, tmp_path, template, says):
    result = _render_with(gsg, tmp_path, template)
    assert (result.code, result.out) == (1, "")
    assert result.err.splitlines()[0] == f"specs/a.yaml:9:13: error GSG011 template [a]: {says}"


def test_numbers_text_and_empty_items_a_template_renders_are_read(gsg, tmp_path):
    """The neighbours: a number is its text, a quoted word is text, an empty item (`- ` of an if) is none, and
    empty documents around the one mapping are no second document."""
    result = _render_with(gsg, tmp_path, '---\npinned: [--max-num-seqs, 8, ~]\ndefaults: ["--max-model-len=4096"]\n'
                                         'env: {A: 1, B: "true", C: 0.5}\n---\n')
    assert result.code == 0, result.err
    assert "backend_parameters:\n- --max-num-seqs=8\n- --max-model-len=4096\n" in result.out
    assert "env:\n  A: '1'\n  B: 'true'\n  C: '0.5'\n" in result.out


# --- one file reached twice: read once --------------------------------------------------------------------------

NAMED = "name: a\nsource: huggingface\nhuggingface_repo_id: meta-llama/Llama-3.1-8B-Instruct\nreplicas: 0\n"


def _link(tree):
    (tree / "z.yaml").symlink_to("a.yaml")


@pytest.mark.parametrize("paths,make", [
    (("specs", "specs"), None),
    (("specs", "specs/a.yaml"), None),  # a folder and a file in it, as a pre-commit hook may pass them
    (("specs/a.yaml", "./specs/a.yaml"), None),
    (("specs",), _link),
])
def test_one_file_reached_twice_is_one_spec(gsg, tmp_path, paths, make):
    """Each path was read again: 'model name 'a' is already declared at specs/a.yaml:1:7' at that very line."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(NAMED)
    if make:
        make(tmp_path / "specs")
    result = gsg("validate", *paths, "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (0, "", "gsg: 0 errors, 0 warnings, 0 notes in 1 spec (1 file)\n")


def test_two_files_of_one_name_are_still_a_duplicate(gsg, tmp_path):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.yaml").write_text(NAMED)
    (tmp_path / "specs" / "z.yaml").write_text(NAMED)
    result = gsg("validate", "specs", "specs/z.yaml", "--fleet", str(FLEET), "--offline", cwd=tmp_path)
    assert result.code == 1 and result.out.splitlines()[0] == (
        "specs/z.yaml:1:7: error GSG005 duplicate-name [a]: model name 'a' is already declared at specs/a.yaml:1:7 "
        "for cluster 'prod'")
