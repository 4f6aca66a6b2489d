"""The plan comment fits GitHub's 65,536-character limit however many deployments change; links are absolute in CI."""

from gpustack_guard.core.deploy.plan import CREATE, UPDATE, Change, FieldChange
from gpustack_guard.reporters.links import line_link
from gpustack_guard.reporters.plan_output import COMMENT_LIMIT, COMMENT_MARKER, render_markdown


def _creates(count: int) -> list[Change]:
    return [Change(CREATE, f"deployment-with-a-long-name-{i:04d}", "default", f"specs/team/d{i:04d}.yaml")
            for i in range(count)]


def test_a_small_plan_is_whole():
    text = render_markdown(_creates(3), [], [])
    assert text.startswith(COMMENT_MARKER + "\n## gsg plan\n\n**Plan: 3 to create")
    assert text.count("| `+` | [deployment-with-a-long-name-") == 3 and "not shown" not in text


def test_thousands_of_creates_stay_under_the_limit_with_a_count():
    text = render_markdown(_creates(5000), [], [])
    shown = text.count("| `+` |")
    assert len(text) <= COMMENT_LIMIT < 65_536
    assert 300 < shown < 5000
    assert f"_… {5000 - shown} more change(s) not shown here" in text


def test_many_changed_fields_are_counted_not_listed():
    change = Change(UPDATE, "m", "default", "specs/m.yaml",
                    fields=[FieldChange(f"f{i}", 1, 2) for i in range(11)])
    row = next(line for line in render_markdown([change], [], []).splitlines() if line.startswith("| `~` |"))
    assert row == "| `~` | [m](specs/m.yaml) | will be updated in place | " + "; ".join(
        f"`f{i}`" for i in range(8)) + "; 3 more |"


def test_links_are_absolute_under_github_actions_and_gitlab(tmp_path):
    spec = tmp_path / "specs" / "a b.yaml"
    github = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/repo", "GITHUB_SHA": "abc123",
              "GITHUB_SERVER_URL": "https://github.example", "GITHUB_WORKSPACE": str(tmp_path)}
    assert line_link(str(spec), 4, github) == "https://github.example/org/repo/blob/abc123/specs/a%20b.yaml#L4"
    gitlab = {"GITLAB_CI": "true", "CI_PROJECT_URL": "https://gitlab.example/g/p", "CI_COMMIT_SHA": "def456",
              "CI_PROJECT_DIR": str(tmp_path)}
    assert line_link(str(spec), 0, gitlab) == "https://gitlab.example/g/p/-/blob/def456/specs/a%20b.yaml"
    assert line_link("specs/a.yaml", 9, {}) == "specs/a.yaml#L9"


def test_validate_markdown_links_are_absolute_in_ci(gsg, monkeypatch):
    from support import FLEET, REPO

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REPOSITORY", "org/repo")
    monkeypatch.setenv("GITHUB_SHA", "abc123")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(REPO))
    out = gsg("validate", "GSG037-tp-heads", "--fleet", str(FLEET), "-o", "markdown", cwd=REPO / "examples" / "negative").out
    assert "](https://github.com/org/repo/blob/abc123/examples/negative/GSG037-tp-heads/spec.yaml#L9)" in out
