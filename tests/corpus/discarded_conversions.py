"""Conversion statements whose result is thrown away, next to receivers that convert in place."""

from typing import Dict

import numpy as np
import pytest
import torch
import torchvision
from torch import nn
from torch.autograd import Variable
from torch.utils.data import DataLoader


class Normalizer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim))  # ok: TDL003
        self.register_buffer("std", torch.ones(dim))  # ok: TDL003
        self.scale = nn.Parameter(torch.ones(dim))  # ok: TDL003
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        self.mean.to(x.device)  # expect: TDL004
        return self.proj((x - self.mean) / self.std) * self.scale

    def to_half(self):
        self.scale.half()  # expect: TDL004
        self.proj.half()  # ok: TDL004
        self.half()  # ok: TDL004

    def move(self, device):
        self.to(device)  # ok: TDL004
        self.proj.to(device)  # ok: TDL004


def prepare(x: torch.Tensor, device):
    x.to(device)  # expect: TDL004
    return x


def as_float(x: torch.Tensor):
    x.float()  # expect: TDL004
    return x


def load_features(path, device):
    arr = np.load(path)
    feats = torch.from_numpy(arr)
    feats.double()  # expect: TDL004
    feats = feats.to(device)  # ok: TDL004
    return feats


def to_half_precision(batch: torch.Tensor):
    batch.to(dtype=torch.float16)  # expect: TDL004
    batch.type(torch.float16)  # expect: TDL004
    return batch


def log_predictions(model: nn.Module, x):
    out = model(x)
    out.detach().cpu()  # expect: TDL004  detach() only exists on tensors
    return out


def move_optimizer_state(optimizer, device):
    for state in optimizer.state.values():
        for k, v in state.items():
            if torch.is_tensor(v):
                state[k] = v.to(device)  # ok: TDL004


class Buffer:
    def __init__(self, cap, dim):
        self.data = torch.zeros(cap, dim)  # ok: TDL003

    def to(self, device):
        self.data = self.data.to(device)
        return self


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dataset = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))  # ok: TDL003

for inputs, labels in DataLoader(dataset, batch_size=8):
    inputs.cuda()  # expect: TDL004
    labels.cuda(non_blocking=True)  # expect: TDL004

replay = Buffer(1000, 4)
replay.to(device)  # ok: TDL004
layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
for layer in layers:
    layer.to(device)  # ok: TDL004
layers.to(device)  # ok: TDL004
crit = nn.MSELoss()
crit.cuda()  # ok: TDL004
encoder = torchvision.models.resnet18()
encoder.to(device)  # ok: TDL004
encoder.type(torch.float16)  # ok: TDL004
norm = Normalizer(4)
norm.to(device)  # ok: TDL004
norm.double()  # ok: TDL004
norm.bfloat16()  # ok: TDL004
thing = torch.hub.load("owner/repo", "model")
thing.to(device)  # ok: TDL004
x = torch.zeros(3)
x = x.to(device)  # ok: TDL004
x.float().div_(255)  # ok: TDL004  may convert in place when x is already float
x.to(device).add_(1)  # ok: TDL004
w = torch.ones(4, 4)
w.type(torch.FloatTensor)  # expect: TDL004
w.double()  # expect: TDL004
print(w.type())


def claim_gpu(device):
    """Create the CUDA context on the chosen GPU early, as trainers do before spawning work."""
    torch.ones(1).to(device)  # ok: TDL004  a fresh tensor: run for its side effect
    torch.cuda.empty_cache()


class PairScorer:
    """Models loaded by a library's loader, switched to evaluation and moved in one statement."""

    def __init__(self, name, device):
        self.device = device
        self.model = torch.hub.load("owner/repo", name)
        self.model.eval().to(self.device)  # ok: TDL004  eval() returns the module itself
        self.judge = torch.hub.load("owner/repo", name + "-nli")
        self.judge.train(False).cuda()  # ok: TDL004
        self.bias = torch.zeros(4)

    def score(self, pairs):
        self.bias.requires_grad_(False).to(self.device)  # expect: TDL004  requires_grad_ returns the tensor
        return self.model(pairs) + self.bias


class Boxes:
    """Boxes whose to() returns converted boxes, as tensors do."""

    def __init__(self, xyxy):
        self.xyxy = xyxy

    def to(self, device):
        return Boxes(self.xyxy.to(device))

    def shifted(self, offset):
        out = Boxes(self.xyxy + offset)
        return out


class Cameras:
    """Cameras moved in place: their to() returns the cameras themselves."""

    def __init__(self, poses):
        self.poses = poses

    def to(self, device):
        self.poses = self.poses.to(device)
        return self


def place_targets(xyxy, poses, device):
    boxes = Boxes(xyxy)
    boxes.to(device)  # expect: TDL004  the project's to() returns a new object
    cameras = Cameras(poses)
    cameras.to(device)  # ok: TDL004
    moved = boxes.shifted(1.0)
    moved.to(device)  # expect: TDL004  shifted() makes new Boxes, converted into a copy too
    return boxes, cameras, moved


def pack_quantized(model, quantizers, quant_linear):
    """Items of a collection of modules are modules (a quantizer packing its layers)."""
    qlayers = get_layers(model, [quant_linear])
    for name in qlayers:
        layer_device = qlayers[name].device
        qlayers[name].to("cpu")  # ok: TDL004  get_layers() gathers modules
        qlayers[name].pack(quantizers[name])
        qlayers[name].to(layer_device)  # ok: TDL004
    children = {key: child for key, child in model.named_children()}
    children["head"].half()  # ok: TDL004  the values of named_children() are modules
    outputs = get_model_outputs(model)
    outputs[0].cpu()  # expect: TDL004  a helper named after outputs, not after modules
    return qlayers


class QuantizedLoRA(nn.Module):
    """A weight replaced by an object of another class: its own cuda() decides."""

    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)

    def merge(self, merged, params_class):
        weight = self.linear.weight
        self.linear.weight = params_class(merged, requires_grad=False)
        self.linear.weight.cuda(weight.device)  # ok: TDL004  quantized in place by its class
        self.linear.bias.cuda()  # expect: TDL004  still the Linear's bias tensor

    def reset(self, batch):
        batch["mask"] = torch.ones(3)  # ok: TDL003
        batch["mask"].cuda()  # expect: TDL004  assigned a tensor just before


def encode_texts(encoder, tokenizer, texts, device, output_device, build):
    """The assignment that reaches the statement decides, not every binding of the name."""
    encoded = tokenizer(texts, return_tensors="pt")
    mask = encoded.attention_mask.to(device)
    hidden = encoder(attention_mask=mask).last_hidden_state.detach()
    mask = mask[..., None].bool()
    hidden.to(output_device)  # expect: TDL004
    mask.to(output_device)  # expect: TDL004  the line before made it a tensor
    state = build()
    for step in texts:
        state.to(device)  # ok: TDL004  the assignment below reaches the next iteration
        state = hidden[step]
    return hidden.masked_fill(~mask, 0.0), state


class ClipClassifier(nn.Module):
    """An attribute assigned what only looks like a tensor keeps its own evidence."""

    def __init__(self, loader, arch, to_float32):
        super().__init__()
        self.clip = loader.load(arch, device="cpu")[0]
        if to_float32:
            self.clip.float()  # ok: TDL004  a layer of the module (self.<name>)


class QuantCollection(nn.Module):
    """A module's own to() that forgets its parameters are tensors."""

    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def to(self, device):
        for param in self.parameters():
            if param.device.type != "meta":
                param.to(device)  # expect: TDL004  the items of parameters() are tensors
        for name, buf in self.named_buffers():
            buf.cuda()  # expect: TDL004
        for child in self.children():
            child.to(device)  # ok: TDL004  modules
        return self


@pytest.mark.parametrize("prior", [BoxPrior(torch.zeros(2), torch.ones(2)), pytest.param(Wrapped(base))])
def test_prior_moves(prior):
    prior.to("cpu")  # ok: TDL004  parametrized with objects of classes
    assert prior.device == "cpu"


@pytest.mark.parametrize("values, device", [(torch.zeros(2), "cpu"), (torch.ones(3), "cpu")])
def test_values_move(values, device):
    values.to(device)  # expect: TDL004  parametrized with tensors
    assert values.device.type == device


def load_generator(encoder_name, generator_name, device):
    rag = RagGenerator.from_pretrained_encoder_generator(encoder_name, generator_name).to(device)
    rag.to(device)  # ok: TDL004  an alternate constructor (from_...) makes an object
    return rag


def pack_layer(layer, use_fp, orig_device):
    """Calling a name that holds a class constructs an object."""
    linear_func = FpQuantLinear if use_fp else IntQuantLinear
    qlayer = linear_func(4, 128, layer.in_features, layer.out_features)
    qlayer.pack(layer)
    qlayer.to(orig_device)  # ok: TDL004  a QuantLinear module
    return qlayer


def clip_linears(named_linears, input_feat, device):
    for name in named_linears:
        named_linears[name].to(device)  # ok: TDL004  the plural of a word for modules
        named_linears[name].cpu()  # ok: TDL004
    return input_feat


class OffloadingTracer:
    def run_submodules(self, targets, inputs):
        for target in targets:
            mod = self.fetch_attr(target)
            mod.cuda()  # ok: TDL004  "mod" is the usual short name of a module
            mod(inputs)
            mod.cpu()  # ok: TDL004


def validate(model, loader, device):
    for step, batch in tqdm(enumerate(loader), total=len(loader)):
        batch.to(device)  # ok: TDL004  a whole loader item, enumerate inside tqdm
        model(batch)


class Agent:
    def act(self, device):
        space = self.safety_module.filter_action(self.state)
        if isinstance(space, DiscreteActionSpace) and self.requires_tensors:
            space.to(device)  # ok: TDL004  the isinstance conjunct names a class of its own
        checked = self.safety_module.filter_action(self.state)
        assert isinstance(checked, DiscreteActionSpace)
        checked.to(device)  # ok: TDL004  so does the assert before it
        scores = self.scorer_output(self.state)
        if torch.is_tensor(scores) and scores.dim() > 1:
            scores.cpu()  # expect: TDL004
        return space, checked, scores


def train_legacy(model, data_loader):
    # chemprop train.py (b6485f02): tensors made with the legacy constructors
    for batch in data_loader:
        mask = torch.Tensor([[x is not None for x in tb] for tb in batch])
        targets = torch.LongTensor([[0 if x is None else x for x in tb] for tb in batch])
        preds = model(batch)
        mask.to(preds.device)  # expect: TDL004
        targets.to(preds.device)  # expect: TDL004
        storage = torch.FloatStorage(3)
        storage.cuda()  # ok: TDL004  a storage, not one of the tensor constructors


def hello_rnn(x_data, y_data):
    # PyTorchZeroToAll 11_3_hello_rnn_gpu.py (d7e3a11e): Variable(x) is the tensor x since PyTorch 0.4
    inputs = Variable(torch.Tensor(x_data))
    labels = torch.autograd.Variable(torch.LongTensor(y_data))
    if torch.cuda.is_available():
        inputs.cuda()  # expect: TDL004
        labels.cuda()  # expect: TDL004
    return inputs, labels


AtomicData = Dict[str, torch.Tensor]


def data_to(data: AtomicData, device=None, dtype=None):
    # nequip AtomicDataDict.to_ (be838b8e): the values of a mapping annotated as one of tensors
    for key, value in data.items():
        value.to(device=device, dtype=dtype)  # expect: TDL004
    return data


def state_to(state: dict, device):
    for key, value in state.items():
        value.to(device)  # ok: TDL004  a mapping of unknown values (modules, optimizers)
    return state


class DeepLIFT:
    def explain(self, x, edge_index, **kwargs):
        # DIG xgraph deeplift.py (d2838464): an item looked up with .get() is judged as one read with []
        node_idx = kwargs.get("node_idx")
        if not node_idx.dim():
            node_idx = node_idx.reshape(-1)
        node_idx.to(self.device)  # expect: TDL004
        encoder = kwargs.get("encoder")
        encoder.to(self.device)  # ok: TDL004  a key that names a module
        head = self.heads.get("cls")
        head.cuda()  # ok: TDL004  an item of the object's own mapping
        return node_idx
