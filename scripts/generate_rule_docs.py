"""Regenerate docs/rules/GSG0NN.md and the README rule table from the rule objects (core/rules/registry.py).

    python scripts/generate_rule_docs.py          # write what is stale
    python scripts/generate_rule_docs.py --check  # exit 1 and list what is stale, write nothing
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpustack_guard.core.rules.registry import RULES  # noqa: E402
from gpustack_guard.reporters.rule_doc import RULE_DOCS_DIR, doc_path, rule_markdown, with_readme_table  # noqa: E402


def expected(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file with the text it must hold."""
    files = {root / doc_path(rule): rule_markdown(rule) for rule in RULES.values()}
    readme = root / "README.md"
    files[readme] = with_readme_table(readme.read_text(encoding="utf-8"), RULES.values())
    return files


def stale(root: Path = ROOT) -> tuple[dict[Path, str], list[Path]]:
    """(files to write, rule docs of ids the registry no longer has)."""
    to_write = {path: text for path, text in expected(root).items()
                if not path.is_file() or path.read_text(encoding="utf-8") != text}
    orphans = sorted(p for p in (root / RULE_DOCS_DIR).glob("*.md") if p.stem not in RULES)
    return to_write, orphans


def main(argv: list[str]) -> int:
    to_write, orphans = stale()
    if "--check" in argv:
        for path in list(to_write) + orphans:
            print(f"stale: {path.relative_to(ROOT)} (run python scripts/generate_rule_docs.py)")
        return 1 if to_write or orphans else 0
    for path, text in to_write.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    for path in orphans:
        path.unlink()
        print(f"removed {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
