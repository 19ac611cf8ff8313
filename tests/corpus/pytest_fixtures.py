"""Tests whose parameters are pytest fixtures: a parameter named after a fixture of the file
receives what the fixture returns, so the fixture decides what the receiver is."""

import unittest

import pytest
import torch
from torch import nn

from .graphs import BoostingTreeModel, ContextGraph


@pytest.fixture(scope="module")
def context_graph():
    graph = ContextGraph(context_score=1.0)
    graph.build(token_ids=[[1, 2, 3]])
    return graph


@pytest.fixture(scope="module")
def boosting_tree(context_graph):
    tree = BoostingTreeModel.from_context_graph(context_graph=context_graph, vocab_size=5)
    return tree


@pytest.fixture
def encoder():
    layer = nn.Linear(4, 4)
    yield layer


@pytest.fixture
def features():
    return torch.randn(2, 4)


@pytest.fixture
def scores(features):
    return features.softmax(-1)


class TestBoostingTree:
    @pytest.mark.parametrize("device", ["cpu", "cuda"])
    def test_advance(self, boosting_tree, device):
        boosting_tree.to(device)  # ok: TDL004  the fixture builds a model with a class's constructor
        states = boosting_tree.get_init_states(batch_size=2)
        return boosting_tree.advance(states)

    def test_encoder(self, encoder, features, device):
        encoder.to(device)  # ok: TDL004  the fixture yields a module
        features.to(device)  # expect: TDL004  the fixture returns a tensor
        return encoder(features)


def test_scores(scores, labels, device):
    scores.cpu()  # expect: TDL004  what a tensor method returns is a tensor
    labels.to(device)  # expect: TDL004  a parametrized argument with no fixture of that name
    return scores, labels


def test_unsupported_dtypes(device):
    data = torch.rand(5, 5, dtype=torch.half)
    with pytest.raises(AssertionError):
        data.to(device)  # ok: TDL004  run for the error it raises
    data.cuda()  # expect: TDL004


class TestMoves(unittest.TestCase):
    def test_bad_device(self):
        weights = torch.zeros(3)
        with self.assertRaisesRegex(RuntimeError, "invalid device"):
            weights.to("cuda:99")  # ok: TDL004
