# A function that asserts an argument is a CPU tensor type (``torch.LongTensor`` is only the
# CPU's) runs on the CPU: the caller-device contract does not hold there. Shape from
# pytorch_geometric's IBMB loader (``get_partitions``: ``assert isinstance(edge_index,
# (torch.LongTensor, SparseTensor))``, METIS partitioning with CPU node weights), with the
# CUDA type and a mere type test as positives. Judged alone the hard negative was silent before
# too; with pyg's own ``SparseTensor`` class in the project it was reported
# (tests/test_project.py::test_a_function_asserting_a_cpu_tensor_type_runs_on_the_cpu).
import torch
from torch_sparse import SparseTensor


def partition_weights(edge_index, indices: torch.Tensor, num_nodes: int):
    assert isinstance(edge_index, (torch.LongTensor, SparseTensor))
    node_weight = torch.ones(num_nodes)  # ok: TDL003  asserted CPU input: partitioning on the CPU
    return node_weight + indices


def cuda_partition_weights(edge_index, indices: torch.Tensor, num_nodes: int):
    assert isinstance(edge_index, (torch.cuda.LongTensor, SparseTensor))
    node_weight = torch.ones(num_nodes)  # expect: TDL003  the CUDA type asserted
    return node_weight + indices


def converted_weights(edge_index, indices: torch.Tensor, num_nodes: int):
    if isinstance(edge_index, torch.LongTensor):
        edge_index = SparseTensor.from_edge_index(edge_index)
    node_weight = torch.ones(num_nodes)  # expect: TDL003  a type test chooses a conversion, it pins nothing
    return node_weight + indices


def nested_weights(edge_index, indices: torch.Tensor, num_nodes: int):
    def check(index):
        assert isinstance(index, torch.LongTensor)

    check(edge_index)
    node_weight = torch.ones(num_nodes)  # expect: TDL003  the assert is the nested function's own
    return node_weight + indices
