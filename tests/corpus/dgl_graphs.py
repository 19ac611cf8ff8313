"""TDL004 with DGL: since DGL 0.5 a graph's ``to``/``cuda``/``cpu`` return a converted copy.

Shapes from DGL's own history (a test moving a graph without assigning it, fixed by
``g = g.to(...)``), rewritten here; its neural-network layers are modules and convert in place.
"""

import dgl
import torch
from dgl.nn import GraphConv


def move_graph(device):
    g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2])))
    g.to(device)  # expect: TDL004
    return g


def legacy_constructor():
    g = dgl.DGLGraph()
    g.add_nodes(3)
    if torch.cuda.is_available():
        g.to(torch.device("cuda"))  # expect: TDL004


def train(graph, features, device):
    graph.cuda()  # expect: TDL004
    features.to(device)  # expect: TDL004
    layer = GraphConv(4, 2)
    layer.to(device)  # ok: TDL004 a dgl.nn layer is an nn.Module
    model = GraphConv(4, 2)
    model.cuda()  # ok: TDL004


def batched(graphs, device):
    bg = dgl.batch(graphs)
    bg = bg.to(device)  # ok: TDL004 assigned
    bg.cpu()  # expect: TDL004
    return bg
