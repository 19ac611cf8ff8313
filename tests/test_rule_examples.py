"""Every rule's documented examples, valid and invalid, as tests."""

import pytest

from torchdevice_lint import Settings, lint_source
from torchdevice_lint.rules import ALL_RULES
from torchdevice_lint.testing import check_example, example_cases

CASES = list(example_cases(ALL_RULES))


@pytest.mark.parametrize(("rule", "example"), [pytest.param(r, e, id=i) for i, r, e in CASES])
def test_example(rule, example):
    check_example(rule, example)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda rule: rule.code)
def test_rule_has_docs_and_enough_examples(rule):
    docs = rule.documentation()
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert section in docs, f"{rule.code} docs lack {section}"
    assert len(rule.invalid) >= 4 and len(rule.valid) >= 4
    assert len(rule.valid) >= len(rule.invalid) - 1


def test_codes_are_unique_and_ordered():
    codes = [rule.code for rule in ALL_RULES]
    assert codes == sorted(set(codes))


@pytest.mark.parametrize(
    ("source", "device"),
    [
        ("class Net(torch.nn.Module):\n    def forward(self, x):\n        return x + torch.arange(x.size(1))\n", "x.device"),
        ("def run(batch, device):\n    inputs = batch.to(device)\n    return inputs + torch.ones(3)\n", "device"),
        # the fix adds a module-level ``device``, which the code does not have yet
        ("def run(batch):\n    inputs = batch.cuda()\n    return inputs + torch.ones(3)\n", ""),
    ],
)
def test_a_factory_meeting_device_tensors_is_told_the_device_its_fix_writes(source, device):
    (finding,) = lint_source(f"import torch\n\n\n{source}", Settings(select=("TDL003",)))
    assert finding.message.endswith(f"pass `device={device}`")
