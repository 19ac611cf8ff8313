"""TDL004 by default: receivers taken for tensors, and the objects that convert in place.

Shapes seen in real repositories and fix commits (rewritten here): batch elements unpacked
in a loop or from a batch argument, teacher labels rebuilt from NumPy, test tensors moved
without assignment, next to modules held in settings mappings, models rebuilt by a helper,
and helpers returning several objects.
"""

import numpy as np
import torch
from torch.utils.data import DataLoader


def train_epoch(model, loader: DataLoader, optimizer, device):
    for images, labels in loader:
        images.to(device)  # expect: TDL004
        labels.cuda()  # expect: TDL004
        loss = model(images).sum()
        loss.backward()
        optimizer.step()


def training_step(model, batch, device):
    inputs, targets = batch
    inputs.to(device)  # expect: TDL004
    targets.to(device, non_blocking=True)  # expect: TDL004
    return model(inputs, targets)


def evaluate(model, samples, device):
    for i, (x, y) in enumerate(samples):
        x.to(device)  # expect: TDL004
        out = model(x)
        out.cpu()  # expect: TDL004  a model's output is a tensor
        out.detach().cpu()  # expect: TDL004
        y[0].cuda()  # expect: TDL004


def teacher_labels(predictions, device):
    rows = [list(p) for p in predictions]
    labels = torch.from_numpy(np.array(rows))
    labels.to(device)  # expect: TDL004
    return labels.int()


def check_ranges(degrees, translate, dtype, device):
    degrees.to(dtype=dtype, device=device)  # expect: TDL004
    translate.to(dtype=dtype, device=device)  # expect: TDL004
    return degrees, translate


def run_recipe(hparams, params, run_opts):
    hparams["embedding_model"].to(run_opts["device"])  # ok: TDL004  modules built from a configuration
    params["mean_var_norm"].to(run_opts["device"])  # ok: TDL004
    hparams["classifier"].eval()


def load(name, device, jit):
    model = torch.jit.load(name).eval()
    if not jit:
        model = build_model(model.state_dict()).to(device)
        if str(device) == "cpu":
            model.float()  # ok: TDL004  named like a module
    return model


def bench(extractor, dev):
    mod, what = get_bench_module(extractor)
    mod.to(dev)  # ok: TDL004  unpacked from an unknown helper: may be anything
    runner = load_runner(extractor)
    runner.cuda()  # ok: TDL004
    for item in loader_of(extractor):
        item.to(dev)  # ok: TDL004  a whole item may be a container converted in place
    net_g, net_d = build_gan()
    net_g.cuda()  # ok: TDL004
    net_d.cuda()  # ok: TDL004


def tokenize(tokenizer, texts, device):
    encoded = tokenizer(texts, return_tensors="pt")
    encoded.to(device)  # ok: TDL004  a BatchEncoding moves in place
    return encoded


class Pipeline(SomeBasePipeline):
    def offload(self, components):
        self.to("cpu", silence_dtype_warnings=True)  # ok: TDL004  self converts in place
        self.image_proj_model.to(self.device).to(self.dtype)  # ok: TDL004
        self.unet.cuda().half()  # ok: TDL004
        components.safety_checker.to("cpu")  # ok: TDL004
        for component in self.components.values():
            component.to("cpu")  # ok: TDL004


def sync_bn_test(apex, DDP, inp):
    sbn = apex.parallel.SyncBatchNorm(4).cuda()
    sbn = DDP(sbn)
    sbn.half()  # ok: TDL004  made by a class
    inp_t = torch.as_tensor(inp.astype("float32"))
    inp_t.to("cuda" if torch.cuda.is_available() else "cpu")  # expect: TDL004


def move_members(members, buckets, device, dtype):
    for key, member in members.items():
        if isinstance(member, torch.Tensor):
            member.to(device)  # expect: TDL004
        elif isinstance(member, torch.nn.Module):
            member.to(device)  # ok: TDL004
    for name, comp in members.items():
        comp.to(device)  # ok: TDL004  .items() pairs anything
    for step, batch in enumerate(buckets):
        batch.to(device)  # ok: TDL004  a whole item
        buckets[step].to(device, keep_param_alignment=True)  # ok: TDL004  not Tensor.to
    for x, y in zip(members, buckets):
        x.to(dtype)  # ok: TDL004
    helper.face_detector.to(device)  # ok: TDL004  a member of an object of unknown class
    v_on_gpu = members[0].cuda()
    v_on_gpu.cpu()  # expect: TDL004  moved, so a tensor
    module = _get_module(members)
    module.to(device)  # ok: TDL004


def synced_norm_half(feature_size, fp16):
    # A module built by a class of another library and moved in the same line (apex tests).
    norm = torch.nn.SyncBatchNorm(feature_size).cuda()
    sbn = SyncBatchNormFromElsewhere(feature_size).cuda()
    if fp16:
        sbn.half()  # ok: TDL004 a constructor's result, moved: still an object
        norm.half()  # ok: TDL004



class TestFunctions:
    def test_moves_a_function(self, x):
        # botorch's test functions are modules kept in a list on the test case.
        f = self.functions[0]
        f.to(device=self.device)  # ok: TDL004 an item of self.<list> is what self.functions[0] is
        row = x[0]
        row.to(self.device)  # expect: TDL004


def encode_image(image_encoder, image, device, num_images, model, helper):
    # diffusers' Kandinsky prior: a model's output, repeated, then "moved" without assigning.
    image_emb = image_encoder(image)["image_embeds"]
    image_emb = image_emb.repeat_interleave(num_images, dim=0)
    image_emb.to(device=device)  # expect: TDL004
    as_float = image_emb.float()
    as_float = as_float.float()
    as_float.to(device)  # expect: TDL004  a conversion of a tensor is a tensor, however often
    squeezed = helper(image).squeeze(0)
    squeezed.to(device)  # expect: TDL004  squeeze gives a tensor (or an array, which has no .to)
    copied = helper(image).clone()
    copied.to(device)  # ok: TDL004  a container's clone (PyG Data) converts in place
    frozen = model.requires_grad_(False)
    frozen.to(device)  # ok: TDL004  a module's requires_grad_ returns the module
    half_model = model.float()
    half_model.to(device)  # ok: TDL004  a module converted is the module
    return image_emb, as_float, squeezed, copied
