# Graph utilities of a library: nothing here names a device, yet every helper runs on the
# device its caller's tensors are on (the device-agnostic contract).
import torch


def relabel(subset, edge_index, num_nodes: int):
    row, col = edge_index
    mapping = row.new_full((num_nodes,), -1)
    mapping[subset] = torch.arange(subset.size(0))  # expect: TDL003  a CPU index range stored into a caller's tensor
    return mapping[edge_index]


def relabel_fixed(subset, edge_index, num_nodes: int):
    row, col = edge_index
    mapping = row.new_full((num_nodes,), -1)
    mapping[subset] = torch.arange(subset.size(0), device=row.device)  # ok: TDL003
    return mapping[edge_index]


def self_loops(edge_index, num_nodes: int):
    loops = torch.arange(num_nodes)  # expect: TDL003  concatenated with the caller's edges
    loops = loops.unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index.view(2, -1), loops], dim=1)


def degree(index, num_nodes: int):
    out = torch.zeros(num_nodes)  # expect: TDL003  in-place scatter of the caller's index
    return out.scatter_add_(0, index.view(-1), torch.ones(index.size(0)))  # expect: TDL003


def degree_like(index, num_nodes: int):
    out = index.new_zeros(num_nodes)  # ok: TDL003  made where the index lives
    return out.scatter_add_(0, index, torch.ones_like(index))


def count_nodes(edge_index):
    return int(edge_index.max()) + 1 if edge_index.numel() > 0 else 0


def first_rows(x, n: int):
    return x.view(-1, 4)[torch.arange(n)]  # ok: TDL003  a CPU index into a device tensor is allowed
