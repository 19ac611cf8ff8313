"""The simulated CUDA device against behaviour documented for real CUDA."""

import io
import re

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from torchdevice_lint.verify.simulated_cuda import (  # noqa: E402
    INVALID_ORDINAL_MESSAGE,
    MISMATCH_MESSAGE,
    NUMPY_MESSAGE,
    hidden_cuda,
    simulated_cuda,
)

CUDA0 = torch.device("cuda", 0)


@pytest.fixture
def sim():
    with simulated_cuda() as mode:
        yield mode


@pytest.mark.parametrize(
    "move",
    [
        pytest.param(lambda t: t.cuda(), id="cuda()"),  # noqa: TDL001
        pytest.param(lambda t: t.cuda(0), id="cuda(0)"),  # noqa: TDL001
        pytest.param(lambda t: t.to("cuda"), id="to-str"),  # noqa: TDL002
        pytest.param(lambda t: t.to("cuda:0"), id="to-str-index"),  # noqa: TDL002
        pytest.param(lambda t: t.to(torch.device("cuda")), id="to-device"),
        pytest.param(lambda t: t.to("cuda", non_blocking=True), id="non_blocking"),  # noqa: TDL002
        pytest.param(lambda t: t.to(device="cuda", dtype=torch.float64),  # noqa: TDL002
                     id="to-kwargs"),
        pytest.param(lambda t: t.to(torch.zeros(1).cuda()), id="to-other-tensor"),  # noqa: TDL001
    ],
)
def test_moves_report_cuda_and_keep_values(sim, move):
    cpu = torch.arange(6.0).reshape(2, 3)
    moved = move(cpu)
    assert moved.device == CUDA0 and moved.is_cuda and not moved.is_cpu
    assert moved.get_device() == 0
    assert cpu.device.type == "cpu"
    assert moved.tolist() == cpu.tolist()


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: torch.zeros(3, device="cuda"), id="str"),  # noqa: TDL002
        pytest.param(lambda: torch.randn(3, device=torch.device("cuda")), id="device"),
        pytest.param(lambda: torch.arange(3, device="cuda:0"), id="arange"),  # noqa: TDL002
        pytest.param(lambda: torch.tensor([1.0], device="cuda"), id="tensor"),  # noqa: TDL002
    ],
)
def test_factories_with_cuda_device(sim, make):
    assert make().device == CUDA0


def test_results_views_and_inherited_factories_stay_on_cuda(sim):
    x = torch.ones(2, 3).cuda()  # noqa: TDL001
    for result in (x + 1, x[0], x.T, x.sum(), torch.zeros_like(x), x.new_zeros(2), x.clone()):
        assert result.device == CUDA0
    with torch.device("cuda"):
        assert torch.ones(1).device == CUDA0
    assert torch.zeros_like(x, device="cpu").device.type == "cpu"


def test_mixing_cuda_and_cpu_raises_the_gpu_message(sim):
    x = torch.ones(3).cuda()  # noqa: TDL001
    with pytest.raises(RuntimeError, match="^" + re.escape(MISMATCH_MESSAGE) + "$"):
        x + torch.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([x, torch.ones(3)])
    with pytest.raises(RuntimeError, match="same device"):
        nn.Linear(3, 2).cuda()(torch.ones(1, 3))  # noqa: TDL001


def test_zero_dim_cpu_tensors_and_scalars_are_accepted(sim):
    x = torch.ones(3).cuda()  # noqa: TDL001
    assert (x * torch.tensor(2.0)).tolist() == [2.0, 2.0, 2.0]
    assert (x + 1).device == CUDA0


def test_cpu_index_on_cuda_accepted_cuda_index_on_cpu_raises(sim):
    cpu = torch.arange(5.0)
    cuda = cpu.cuda()  # noqa: TDL001
    index = torch.tensor([0, 3])
    assert cuda[index].tolist() == [0.0, 3.0]
    assert cuda[index].device == CUDA0
    with pytest.raises(RuntimeError, match="indices should be either on cpu"):
        cpu[index.cuda()]  # noqa: TDL001
    with pytest.raises(RuntimeError, match="indices should be either on cpu"):
        cpu[(cpu > 1).cuda()]  # noqa: TDL001


def test_slice_assignment_copies_across_devices_advanced_does_not(sim):
    cuda = torch.zeros(3, device="cuda")  # noqa: TDL002
    cuda[0:2] = torch.ones(2)
    assert cuda.tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="same device"):
        cuda[torch.tensor([0, 1])] = torch.ones(2)


def test_numpy_raises_cpu_item_tolist_work(sim):
    x = torch.tensor([1.5, 2.5]).cuda()  # noqa: TDL001
    with pytest.raises(TypeError, match="^" + re.escape(NUMPY_MESSAGE) + "$"):
        x.numpy()
    back = x.cpu()
    assert type(back) is torch.Tensor and back.device.type == "cpu"
    assert back.numpy().tolist() == [1.5, 2.5]
    assert x.sum().item() == 4.0 and x.tolist() == [1.5, 2.5]


def test_cuda_queries_patched_inside_and_restored_after():
    before = torch.cuda.is_available()
    with simulated_cuda():
        assert torch.cuda.is_available()
        assert torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
        torch.cuda.synchronize()
        torch.cuda.manual_seed_all(0)
        torch.cuda.manual_seed(0)
    assert torch.cuda.is_available() == before
    with hidden_cuda():
        assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
    assert torch.cuda.is_available() == before


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))


@pytest.mark.parametrize("move", ["to-str", "cuda", "to-device"])
def test_module_moves_parameters_and_buffers_in_place(sim, move):
    model = _model()
    params = list(model.parameters())
    moved = {"to-str": lambda: model.to("cuda"), "cuda": model.cuda,  # noqa: TDL002
             "to-device": lambda: model.to(torch.device("cuda"))}[move]()
    assert moved is model
    assert list(model.parameters()) == params  # same Parameter objects
    assert all(isinstance(p, nn.Parameter) and p.device == CUDA0 for p in params)
    assert all(b.device == CUDA0 for b in model.buffers())
    assert all(v.device == CUDA0 for v in model.state_dict().values())


def _train(device, optimizer_before_move):
    model = _model()
    torch.manual_seed(1)
    inputs, targets = torch.randn(8, 3), torch.randn(8, 1)
    if optimizer_before_move:
        optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model.to(device)
    if not optimizer_before_move:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    inputs, targets = inputs.to(device), targets.to(device)
    for _ in range(3):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
    assert all(p.grad.device.type == device for p in model.parameters())
    return model(inputs).detach().cpu()


@pytest.mark.parametrize("optimizer_before_move", [True, False])
def test_training_on_simulated_cuda_matches_cpu(optimizer_before_move):
    on_cpu = _train("cpu", optimizer_before_move)
    with simulated_cuda():
        on_cuda = _train("cuda", optimizer_before_move)
    assert torch.equal(on_cpu, on_cuda)


def test_save_and_load_with_map_location(sim):
    model = _model().cuda()  # noqa: TDL001
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    on_cuda = torch.load(buffer, map_location="cuda")
    buffer.seek(0)
    on_cpu = torch.load(buffer, map_location="cpu")
    assert all(v.device == CUDA0 for v in on_cuda.values())
    assert all(v.device.type == "cpu" for v in on_cpu.values())
    fresh = _model().cuda()  # noqa: TDL001
    fresh.load_state_dict(on_cpu)
    assert fresh(torch.ones(2, 3).cuda()).device == CUDA0  # noqa: TDL001


@pytest.mark.parametrize(
    "use_second_gpu",
    [
        pytest.param(lambda: torch.ones(2).cuda(1), id="cuda(1)"),  # noqa: TDL001,TDL010
        pytest.param(lambda: torch.ones(2).to("cuda:1"), id="to-str"),  # noqa: TDL002,TDL010
        pytest.param(lambda: torch.ones(2).to(1), id="to-int"),  # noqa: TDL010
        pytest.param(lambda: torch.zeros(2, device=torch.device("cuda", 1)), id="factory"),  # noqa: TDL010
        pytest.param(lambda: nn.Linear(2, 2).cuda(1), id="module-cuda"),  # noqa: TDL001,TDL010
        pytest.param(lambda: nn.Linear(2, 2).to(1), id="module-to-int"),  # noqa: TDL010
        pytest.param(lambda: torch.cuda.set_device(1), id="set_device"),  # noqa: TDL010
        pytest.param(lambda: nn.DataParallel(nn.Linear(2, 2), device_ids=[0, 1]), id="DataParallel"),  # noqa: TDL011
    ],
)
def test_the_simulated_machine_has_one_gpu(sim, use_second_gpu):
    with pytest.raises(RuntimeError, match=INVALID_ORDINAL_MESSAGE):
        use_second_gpu()


def test_the_first_gpu_by_index_is_the_simulated_one(sim):
    torch.cuda.set_device(0)
    assert torch.ones(2).cuda(0).device == CUDA0  # noqa: TDL001
    assert nn.Linear(2, 2).to(0).weight.device == CUDA0


def test_data_parallel_on_one_gpu_moves_the_inputs_and_calls_the_module_once(sim):
    torch.manual_seed(0)
    layer = nn.Linear(2, 3)
    expected = layer(torch.ones(4, 2))
    calls = []
    layer.register_forward_hook(lambda module, args, output: calls.append(args[0].device))
    wrapped = nn.DataParallel(layer)  # noqa: TDL011  moves the module to device_ids[0]
    output = wrapped(torch.ones(4, 2))
    assert (output.device, calls, layer.weight.device) == (CUDA0, [CUDA0], CUDA0)
    torch.testing.assert_close(output.cpu(), expected.detach())
