"""`gsg rule`, the generated rule docs and README table, and the SARIF help that points at them."""

import importlib.util
import json
import re

from support import REPO  # noqa: E402

from gpustack_guard.core.rules.registry import RULES
from gpustack_guard.reporters.rule_doc import PROJECT_URL, rule_markdown


def _generator():
    spec = importlib.util.spec_from_file_location("generate_rule_docs", REPO / "scripts" / "generate_rule_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rule_prints_the_whole_documentation(gsg):
    result = gsg("rule", "GSG033")
    assert result.code == 0 and result.err == ""
    assert result.out == rule_markdown(RULES["GSG033"])
    lines = result.out.splitlines()
    assert lines[:5] == ["# GSG033 kv-oversubscribed", "", "Default severity: warning", "",
                         "max_num_seqs x tokens per sequence exceeds the KV capacity: requests queue or get "
                         "preempted."]
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## What it catches", "## Why it matters", "## Example", "## Fix"]
    assert "```yaml\nbackend_parameters: [--max-model-len=32768, --max-num-seqs=64]\n" in result.out


def test_rule_accepts_lower_case_ids_and_names(gsg):
    assert gsg("rule", "gsg021").out == gsg("rule", "worker-selector").out == rule_markdown(RULES["GSG021"])


def test_stage_emitted_rules_say_which_stage(gsg):
    assert "Emitted by: the spec loader (adapters/files/spec_loader.py)" in gsg("rule", "GSG001").out
    assert "Emitted by:" not in gsg("rule", "GSG035").out


def test_rule_list_has_one_line_per_rule(gsg):
    result = gsg("rule", "--list")
    assert result.code == 0
    lines = result.out.splitlines()
    assert [line.split()[0] for line in lines] == list(RULES) == sorted(RULES)
    assert re.fullmatch(r"GSG033  kv-oversubscribed +warning  max_num_seqs x tokens per sequence exceeds the KV "
                        r"capacity: requests queue or get preempted\.", lines[list(RULES).index("GSG033")])


def test_unknown_rule_is_one_line_with_a_suggestion(gsg):
    result = gsg("rule", "GSG333")
    assert result.code == 1 and result.out == ""
    assert result.err == "gsg: error: unknown rule 'GSG333' (did you mean GSG033, GSG053 or GSG043?)\n"
    result = gsg("rule", "kv-oversubscribd")
    assert result.err == "gsg: error: unknown rule 'kv-oversubscribd' (did you mean kv-oversubscribed?)\n"
    result = gsg("rule", "nothing-like-it")
    assert result.err == "gsg: error: unknown rule 'nothing-like-it' (gsg rule --list shows them all)\n"


def test_rule_needs_an_id_or_list(gsg):
    result = gsg("rule")
    assert result.code == 1 and result.err == "gsg: error: give a rule id (gsg rule GSG033) or --list\n"
    assert gsg("rule", "GSG001", "--list").err == "gsg: error: give either a rule id or --list, not both\n"


def test_rule_docs_and_readme_table_are_generated_and_current():
    to_write, orphans = _generator().stale()
    assert [str(p.relative_to(REPO)) for p in to_write] == [] and orphans == [], \
        "run: python scripts/generate_rule_docs.py"
    assert sorted(p.stem for p in (REPO / "docs" / "rules").glob("*.md")) == sorted(RULES)


def test_a_stale_doc_is_detected(tmp_path):
    generator = _generator()
    (tmp_path / "README.md").write_text("# x\n<!-- rules:start -->\nold table\n<!-- rules:end -->\ntail\n")
    (tmp_path / "docs" / "rules").mkdir(parents=True)
    (tmp_path / "docs" / "rules" / "GSG999.md").write_text("gone\n")
    to_write, orphans = generator.stale(tmp_path)
    assert len(to_write) == len(RULES) + 1 and tmp_path / "README.md" in to_write
    assert to_write[tmp_path / "README.md"].startswith("# x\n<!-- rules:start -->\n| id | name | default | what |\n")
    assert to_write[tmp_path / "README.md"].endswith("|\n<!-- rules:end -->\ntail\n")
    assert orphans == [tmp_path / "docs" / "rules" / "GSG999.md"]


def test_sarif_help_points_at_each_rules_own_doc(gsg):
    result = gsg("validate", "spec.yaml", "--fleet", str(REPO / "examples" / "fleet.yaml"), "-o", "sarif",
                 cwd=REPO / "examples" / "negative" / next(p.name for p in (REPO / "examples" / "negative").iterdir()
                                                            if (p / "expected.json").is_file()))
    rules = json.loads(result.out)["runs"][0]["tool"]["driver"]["rules"]
    uris = [r["helpUri"] for r in rules]
    assert len(set(uris)) == len(rules) == len(RULES)
    by_id = {r["id"]: r for r in rules}
    assert by_id["GSG033"]["helpUri"] == f"{PROJECT_URL}/blob/main/docs/rules/GSG033.md"
    assert by_id["GSG033"]["help"] == {"text": rule_markdown(RULES["GSG033"]),
                                       "markdown": rule_markdown(RULES["GSG033"])}
    assert by_id["GSG033"]["shortDescription"] == {"text": RULES["GSG033"].summary}


def test_rule_help(gsg):
    result = gsg("rule", "--help")
    assert result.code == 0 and "Usage: gsg rule [OPTIONS] [RULE]" in result.out and "--list" in result.out
