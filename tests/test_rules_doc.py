"""docs/rules.md is generated from the rule modules and must stay in sync with them."""

import importlib.util
from pathlib import Path

from torchdevice_lint.rules import ALL_RULES

ROOT = Path(__file__).resolve().parent.parent


def _generator():
    spec = importlib.util.spec_from_file_location("generate_rules_doc", ROOT / "scripts" / "generate_rules_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rules_doc_is_generated_from_the_rule_modules():
    stored = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert stored == _generator().render(), "docs/rules.md is out of date: run python scripts/generate_rules_doc.py"


def test_rules_doc_covers_every_rule_with_its_sections():
    text = _generator().render()
    for rule in ALL_RULES:
        assert f"## {rule.code} {rule.name}" in text
        assert rule.message in text
    for section in ("### What it does", "### Why is this bad?", "### Example", "### Use instead", "### Fix safety"):
        assert text.count(section) == len(ALL_RULES)


def test_check_mode_reports_a_stale_page(tmp_path, monkeypatch):
    generator = _generator()
    monkeypatch.setattr(generator, "DOC", tmp_path / "rules.md")
    assert generator.main(["--check"]) == 1
    assert generator.main([]) == 0
    assert generator.main(["--check"]) == 0
