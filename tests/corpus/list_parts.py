# What a list literal holds, and what is appended to it later, meets in ``torch.cat``/``torch.stack``
# of that list: a CPU factory put there meets the caller's tensors appended after it (PyG's
# k_hop_subgraph, b713e68eef). Hard negatives: only host values in the list, a rebound list.
import torch


def k_hop_nodes(node_idx: int, num_hops: int, edge_index: torch.Tensor):
    row, col = edge_index
    node_mask = row.new_empty(int(row.max()) + 1, dtype=torch.bool)
    subsets = [torch.tensor([node_idx]).flatten()]  # expect: TDL003  cat with col's items below
    for _ in range(num_hops):
        node_mask.fill_(False)
        node_mask[subsets[-1]] = True
        subsets.append(col[node_mask[row]])
    return torch.cat(subsets).unique()


def k_hop_nodes_fixed(node_idx: int, num_hops: int, edge_index: torch.Tensor):
    row, col = edge_index
    node_mask = row.new_empty(int(row.max()) + 1, dtype=torch.bool)
    subsets = [torch.tensor([node_idx], device=row.device).flatten()]  # ok: TDL003
    for _ in range(num_hops):
        node_mask.fill_(False)
        node_mask[subsets[-1]] = True
        subsets.append(col[node_mask[row]])
    return torch.cat(subsets).unique()


def host_offsets(sizes: list[int]):
    parts = [torch.zeros(1, dtype=torch.long)]  # ok: TDL003  only host tensors join it
    for size in sizes:
        parts.append(torch.tensor([size]))
    return torch.cat(parts).cumsum(0)


def rebound(edge_index: torch.Tensor):
    row, col = edge_index
    parts = [torch.zeros(1, dtype=torch.long)]  # ok: TDL003  the list is replaced before the cat
    parts = []
    parts.append(col)
    return torch.cat(parts)
