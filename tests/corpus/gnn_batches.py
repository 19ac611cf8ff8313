"""Graph batches from PyTorch Geometric: their .to() works in place."""

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Batch, Data, HeteroData
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GCNConv, global_mean_pool

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_graph(num_nodes, num_feats):
    x = torch.randn(num_nodes, num_feats)  # ok: TDL003
    src = torch.arange(num_nodes - 1)  # ok: TDL003
    edge_index = torch.stack([torch.cat([src, src + 1]), torch.cat([src + 1, src])])
    y = torch.tensor([num_nodes % 2])  # ok: TDL003
    return Data(x=x, edge_index=edge_index, y=y)


class GCN(nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden)
        self.conv2 = GCNConv(hidden, hidden)
        self.lin = nn.Linear(hidden, out_channels)

    def forward(self, x, edge_index, batch):
        h = F.relu(self.conv1(x, edge_index))
        h = F.relu(self.conv2(h, edge_index))
        return self.lin(global_mean_pool(h, batch))


class SelfLoopGCN(GCN):
    def forward(self, x, edge_index, batch):
        num_nodes = x.size(0)
        num_edges = edge_index.size(1)
        loop = torch.arange(num_nodes)  # expect: TDL003  concatenated with the device edge_index
        loop = loop.unsqueeze(0).repeat(2, 1)
        edge_index = torch.cat([edge_index, loop], dim=1)
        assert edge_index.size(1) == num_edges + num_nodes
        return super().forward(x, edge_index, batch)


def to_dense_adj_simple(edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """edge_index on the caller's device indexes a CPU table: a bug there."""
    adj = torch.zeros(num_nodes, num_nodes)  # expect: TDL003
    adj[edge_index[0], edge_index[1]] = 1.0
    return adj


graphs = [make_graph(n, 16) for n in range(5, 50)]
loader = DataLoader(graphs, batch_size=8, shuffle=True)
model = GCN(16, 32, 2).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)

for epoch in range(10):
    for data in loader:
        data.to(device)  # ok: TDL004
        opt.zero_grad()
        out = model(data.x, data.edge_index, data.batch)
        loss = F.cross_entropy(out, data.y)
        loss.backward()
        opt.step()

single = make_graph(10, 16)
single.to(device)  # ok: TDL004
manual = Data(x=torch.randn(4, 16), edge_index=torch.tensor([[0, 1, 2], [1, 2, 3]]))  # ok: TDL003
manual.to(device)  # ok: TDL004
manual.cpu()  # ok: TDL004
big = Batch.from_data_list(graphs[:4])
big.to(device)  # ok: TDL004

hetero = HeteroData()
hetero["paper"].x = torch.randn(100, 16)  # ok: TDL003
hetero["author"].x = torch.randn(50, 16)  # ok: TDL003
hetero["author", "writes", "paper"].edge_index = torch.randint(0, 50, (2, 300))  # ok: TDL003
hetero.to(device)  # ok: TDL004

with torch.no_grad():
    single_out = model(single.x, single.edge_index, torch.zeros(single.num_nodes, dtype=torch.long))  # miss: TDL003  a CPU batch vector fed to the moved model; it meets the device in a PyG op we do not model
