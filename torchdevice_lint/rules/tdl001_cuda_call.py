from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.binding import DeviceChoice
from torchdevice_lint.analysis.evidence import in_gpu_labelled_section
from torchdevice_lint.analysis.guards import (
    in_code_named_for_cuda,
    in_cuda_only_test,
    under_device_check,
)
from torchdevice_lint.analysis.operands import keeps_device
from torchdevice_lint.analysis.tree import keyword_argument, positional_arguments
from torchdevice_lint.analysis.values import Kind
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import argument, expression, without_trailing_comma


class CudaCall(Rule):
    """
    ## What it does
    Flags every `.cuda(...)` call on a tensor or a module, guarded by
    `torch.cuda.is_available()` or not (a guarded one without a fix). Tests that are skipped without CUDA
    (`@skipIf(not torch.cuda.is_available())`, `@requires_cuda`) are CUDA-only by design and
    left alone, and so is code that is CUDA-only by construction: Triton kernels and launchers,
    `bitsandbytes` and `nvdiffrast` paths (a function calling into them), a module built on Triton, TensorRT (or torch2trt), PyCUDA, CuPy or a compiled extension
    the project builds from CUDA sources (`CUDAExtension(...)` in its `setup.py`, or an `Extension(...)`
    whose list of sources holds a `.cu` file), imported at module
    level outside any block, or through a module of the project that imports one there (an
    optional import such as `optional_import("cupy")` does not count), a module importing, at
    any depth, one that compiles CUDA sources when imported (a module-level
    `torch.utils.cpp_extension.load(...)` of a `.cu` file, stylegan2's `op/upfirdn2d.py`), a function that waits for the GPU (`torch.cuda.synchronize()`,
    `torch.cuda.ipc_collect()`, CUDA events or streams outside a device check) and a module that times GPU work with CUDA
    events. Code that only runs with such a function (another method of its class, a function of
    the module calling it or called only from such functions) is reported without a fix: making it
    portable alone cannot make the program run without CUDA. So is a function handing a module to
    `DistributedDataParallel(..., device_ids=[rank])`, which refuses a module on the CPU, or
    entering `with torch.cuda.device(0):` (an index, `"cuda:N"` or `torch.device("cuda")` written
    out: entering it raises without CUDA; a tensor's `.device` or `get_device()` does not count),
    and the code beside it as above. So is a function handing tensors to a `torch.distributed`
    collective (`all_gather`, `all_reduce`, ...) on its main path, in a project whose every
    `init_process_group` names the `"nccl"` backend: NCCL takes only CUDA tensors. So is all of a script that cannot
    start without CUDA: on its default path (top-level code, the `__main__` block, a function it
    calls) it calls `init_process_group(backend="nccl")`, `torch.cuda.set_device`,
    `torch.cuda.current_device`, `torch.cuda.get_device_name` (or another `torch.cuda` query that
    needs a GPU: its properties, free memory, memory statistics, random state), `torch.cuda.synchronize()`, such a `DistributedDataParallel`
    or such a `with torch.cuda.device(0):` outside a device check, or ends itself where there is no GPU
    (`if not torch.cuda.is_available(): sys.exit(1)`, or `raise`). So, too, is a module using a function or class, of a project module it
    imports at module level, that refuses tensors off CUDA: a function, or a class's `forward`,
    that asserts `x.is_cuda` or raises when `not x.is_cuda`, or one of that module calling such
    code without choosing by device. An import at module level may sit in a `try:` whose `except`
    imports the same module another way (`from .ops import corr` / `import corr`).

    ## Why is this bad?
    `.cuda()` only works where PyTorch was built with CUDA and a GPU is present. On a laptop,
    a Mac or a CPU-only CI runner it raises `AssertionError: Torch not compiled with CUDA
    enabled`. Even under `if torch.cuda.is_available():` it splits the code into two paths,
    one of which is never tested on machines without a GPU. `.to(device)` with one portable
    device variable runs everywhere.

    ## Example
    ```python
    model = Net().cuda()
    for images, labels in loader:
        images = images.cuda(non_blocking=True)
    ```

    ## Use instead
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
    ```

    ## Fix safety
    Safe: `.cuda()` becomes `.to(device)` with a device already in scope (`args.device` that a
    script's `cli()` sets), or one new module-level `device` binding, keeping `non_blocking` and
    `memory_format`. The repository's own accelerator switch is the device where it has one: a
    module-level name or attribute bound once (`cuda = True`, `args.cuda = not args.no_cuda and
    torch.cuda.is_available()`) that guards other moves (`if args.cuda: model.cuda()`) or is set
    from `is_available()` gives `device = torch.device("cuda" if args.cuda else "cpu")` under it
    and under the statements that change it in place (`gpu_ids.append(i)`);
    in a function, a switch guarding its moves whose root it can read (a parameter: `if
    cfg.NUM_GPUS:`, `if len(gpu_ids) > 0:`; `self.gpu_mode` in its class or a base class of the project (this file or an imported
    module; in `__init__` once the base's `__init__` ran), also where it only
    chooses a CUDA type or `'cuda'`: `torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor`)
    or a parameter named as one (`gpu_ids`, `use_cuda`; a count such as `ngpu` only where tested) gives
    `.to(torch.device("cuda" if self.gpu_mode else "cpu"))`, the test written as the file
    writes it; likewise a switch that module-level code of a block (`if __name__ == '__main__':`)
    binds and tests, in that block's code after its binding, in functions defined there
    after it and in top-level functions that already read its root as a global (`args.lr`). Where a function gets that
    device at two or more sites and its every name is a parameter (`self` outside `__init__`) that
    the function never rebinds or changes, it is bound once, right before the first statement of
    the function that reads it (`device = torch.device("cuda" if use_cuda else "cpu")`; the comment
    lines written on that statement stay on it), and the sites use the name (not where the function already uses that name). Elsewhere the inline device is written
    once per statement: a statement with several moves keeps its findings without a fix. Where the
    switch cannot be read at the site (set below
    it), the finding keeps no fix rather than a device that contradicts the switch. The device of
    a tensor the moved one meets in an operation that requires one device (an operand of the
    same arithmetic, comparison or torch combining call, or of the first later statement that
    reads the name the result is bound to, past a loop that only writes numbers into its items
    (`mask[i, j] += 1`), or a name bound from it there (`torch.stack`, `torch.cat`
    joining it included; a partner first bound later and computed only from a tensor argument
    stands for that argument; scaled by what is not known as a tensor, `logprobs + (mask * -0.693 * alpha)`, it meets what the product meets), unless the partner is bound again in between; `Variable(...)` and `nn.Parameter(...)` are the tensor they wrap; the
    receiver of a method only tensors have, `out.scatter_(1, idx.cuda(), 1.0)`; a torch factory sized from a tensor argument,
    `torch.zeros(gt.size()).cuda()`, goes with it as TDL002 places it: `x * t.cuda()` becomes `x * t.to(x.device)`); a
    tensor input of a decorator's `def wrapper(self, x)` that the decorator returns (it replaces a
    method, and its `x` arrives as a `forward`'s) gives `x.device`; a tensor made on the device of the one it copies (`torch.ones_like(x).cuda()`, `x.new_zeros(n).cuda()`)
    loses the move, and so does a `torch.nn` loss made without tensors (`nn.MSELoss()`, no
    `weight=`) in a function where the fix would otherwise use the module device line; never
    of a call of other code, which may move its arguments itself; `self.device`
    in a Lightning `LightningModule`, `LightningLite` or `Fabric`; the class's own method that
    returns a device on every path (`<x>.device`, `torch.device(...)`: `self.get_device()`), or in
    a module's `forward` (and what it calls) a function of one parameter of the file or the
    project that does (tianshou's `torch_device(self)`); never a variable naming the CPU
    (`cpu_device = torch.device("cpu")`) or one that may be the CPU on purpose (`torch.device("cpu") if gather_on_cpu else torch.device("cuda")`, or
    the same choice as an `if`/`else` statement binding it, or `self.device`, in both branches:
    only the `torch.cuda.is_available()` test, or a flag asking for CUDA with the CPU as its
    fallback, `"cuda" if args.cuda else "cpu"`, makes such a conditional the device); a device the
    call names stays (`.cuda(w.device)` becomes `.to(w.device)`, `.cuda(t.get_device())`
    becomes `.to(t.device)`). An object of a class of the project with its own `cuda()` but
    no `to()` is reported without a fix, and so is a call under a device check
    (`if torch.cuda.is_available():`, `if args.cuda:`, a conditional expression) or in a
    function or class named for CUDA or the GPU (`ToGPU`): that code only runs with CUDA,
    where `.to(device)` would change nothing, and does not fail without a GPU (its message says it
    keeps a separate CPU path instead); make it portable by hand (one `device`, no
    branch). Unsafe when
    the call names a device index (`.cuda(1)`, `.cuda(args.gpu)`): the fix drops it, which
    changes the GPU used on a multi-GPU machine.
    """

    code = "TDL001"
    name = "cuda-call"
    message = "`.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)`"
    #: Under a device check or in code named for the GPU the call does not fail: it keeps a CPU
    #: path apart that machines without a GPU run and the GPU ones never test.
    guarded_message = "`.cuda()` on a path taken only with CUDA keeps a separate CPU path; use one `.to(device)` for both"
    needles = (".cuda(",)

    valid = (
        # the fixed form of the worker that sets its GPU up only where there is one
        "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def worker(cfg, gpu_id):\n    if torch.cuda.is_available():\n"
        "        torch.cuda.set_device(gpu_id)\n    return build(cfg).to(device)\n",
        # the fixed form of the distributed-launch example
        "import os\nimport torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def main(model):\n    if 'LOCAL_RANK' in os.environ:\n"
        "        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n    return model.to(device)\n",
        # GPUs named for a data-parallel run, moved as the device says
        "import torch\nfrom torch import nn\n\n\ndef wrap(model, device):\n"
        "    return nn.DataParallel(model.to(device), device_ids=[0, 1])\n",
        # a module placed where the function places its tensors
        "import torch\n\n\ndef denoiser(waveglow):\n    stft = STFT().to(waveglow.upsample.weight.device)\n"
        "    return stft, torch.zeros(1, 80, device=waveglow.upsample.weight.device)\n",
        # a constant table indexed by the parts of a stacked tensor, placed on its device
        "import torch\n\n\ndef edge_faces(idx):\n    edges = torch.stack((idx[:, 0], idx[:, 1]), dim=-1)\n"
        "    return edges, torch.arange(idx.shape[0]).to(idx.device)\n",
        # the fixed form of the example refusing only a GPU the user asked for
        "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
        "def run():\n    return torch.zeros(8).to(device)\n\n\ndef main(args):\n"
        "    if args.cuda and not torch.cuda.is_available():\n        raise SystemExit('no GPU')\n    run()\n",
        # a script that ends without a GPU, already moving with a device it chose
        "import sys\nimport torch\n\n\ndef main(loader, device):\n    if torch.cuda.device_count() == 0:\n"
        "        sys.exit(1)\n    for x in loader:\n        x = x.to(device)\n",
        # the fixed form of the closing-comment example below
        "import torch\nfrom torch.utils.data import DataLoader\n# =====END: ADDED FOR DISTRIBUTED======\n\n"
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
        "def build(net):\n    return net.to(device)\n",
        # the fixed form of the guarded-import example below
        "import torch\nimport yaml\n\ntry:\n    from yaml import CLoader as Loader\nexcept ImportError:\n"
        '    from yaml import Loader\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
        "model = build(Loader).to(device)\n",
        # a parameter's device where the function computes with it, as the fix writes it
        "import torch\n\n\ndef pad(values, n):\n    out = torch.zeros_like(values)\n"
        "    return out, torch.arange(n).to(values.device)\n",
        "import numpy as np\nimport torch\n\n\ndef sample(all_rois, gt_boxes, n):\n"
        "    inds = torch.from_numpy(np.arange(n)).long().to(gt_boxes.device)\n    return all_rois[inds]\n",
        "import torch\n\n\ndef delays(corr, k):\n    return torch.topk(corr, k, dim=-1)[1].to(corr.device)\n",
        "import torch\n\n\ndef scale(x, k):\n    return torch.mean(x) * torch.ones(k, device=x.device)\n",
        # a preprocessor moving its arguments to the device it is given keeps that device
        "import torch\n\n\ndef preprocess(images, device):\n    images = images.to(device)\n"
        "    mean = torch.tensor([0.5]).to(device)\n    return torch.sub(images, mean) / torch.std(images)\n",
        "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
        "    def sample(self, it, n):\n        logprobs = F.log_softmax(self.proj(it), dim=-1)\n"
        "        mask = torch.zeros(logprobs.size()).to(logprobs.device)\n        for i in range(n):\n            mask[i, 0] += 1\n"
        "        return logprobs + (mask * -0.693)\n",
        "import torch\n\n\ndef sliced_forward(single_forward):\n    def wrapper(self, x):\n"
        "        total = torch.zeros(x.size()).to(x.device)\n        return total + single_forward(self, x)\n"
        "    return wrapper\n",
        # what the fix writes in a function reading the arguments its script parses under __main__
        "import torch\n\n\ndef train(loader):\n    for x in loader:\n"
        "        net(x.to(torch.device('cuda' if args.cuda else 'cpu')), args.lr)\n",
        # what the fix writes for the switch of a __main__ block in a function defined there
        "import torch\n\nif __name__ == '__main__':\n    args = parser.parse_args()\n"
        "    def train(loader):\n        for x in loader:\n"
        "            net(x.to(torch.device('cuda' if args.ngpu > 0 else 'cpu')))\n",
        # one device for two values, bound once
        "import torch\n\n\ndef test(loader):\n    args = get_args()\n"
        "    device = torch.device('cuda' if args.ngpu > 0 else 'cpu')\n"
        "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n",
        # what the fix writes in a class whose switch chooses a CUDA type
        "import torch\n\n\nclass Model(nn.Module):\n    def initialize(self, opt):\n"
        "        self.gpu_ids = opt.gpu_ids\n"
        "        self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor\n\n"
        "    def grow(self):\n        self.netG.to(torch.device('cuda' if self.gpu_ids else 'cpu'))\n",
        "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nNAME = 'net'\n"
        "model = Net().to(device)\n",
        # what the fix writes in a class that places its data with self.device
        "import torch\nfrom basicsr.models.sr_model import SRModel\n\n\nclass Model(SRModel):\n"
        "    def feed_data(self, data):\n        self.lq = data['lq'].to(self.device)\n"
        "        self.kernel = data['kernel'].to(self.device)\n",
        # what the fix writes in a Lightning class: the device the framework runs the process on
        "import torch\nfrom lightning.fabric import Fabric\n\n\nclass Runner(Fabric):\n"
        "    def run(self, model):\n        return model.to(self.device)\n",
        "model = Net().to(device)",
        # what the fix writes beside an operand of the same operation
        "import torch\n\n\ndef data_term(y: torch.Tensor, rec: torch.Tensor):\n"
        "    return torch.where(rec != 0, y - rec, torch.tensor([0.0]).to(rec.device))\n",
        "def scale(x, w):\n    return x * w.to(x.device)",
        "def loc_loss(pred, gt):\n    return torch.zeros(gt.size()).to(gt.device) * (pred - gt)\n",
        "def reorient(batch, p):\n    r = batch['rotated'].to(p.device)\n    return torch.where(r, p.t(), p)\n",
        "import torch\n\nw = torch.ones(3).to(grads.device)",
        "def encode(make, idx, n):\n    out = make(n).zero_()\n    return out.scatter_(1, idx.to(out.device), 1.0)\n",
        "def vat_loss(model, x, d):\n    d = Variable(d.to(x.device), requires_grad=True)\n    return model(x + d)\n",
        "def loss_reg(outputs, p):\n    return torch.ones_like(outputs) * p\n",
        "def get_loss(outputs, target):\n    criterion = nn.MSELoss(reduction='mean')\n    return criterion(outputs, target)\n",
        "def f(a, g):\n    w = a.to(device)\n    g = g.to(w.device)\n    return w * g\n",
        "def anchors(xx, anchor_wh):\n    xx = xx.to(anchor_wh.device)\n    mesh = torch.stack([xx, xx])\n"
        "    return torch.cat([mesh, anchor_wh.unsqueeze(-1)])\n",
        "def loss_ls(outputs):\n    n, c = outputs.size(0), outputs.size(1)\n"
        "    return torch.full((n, c), 0.1).to(outputs.device)\n",
        "def nms(model, boxes):\n    cpu = torch.device('cpu')\n    return model.to(device)(boxes).to(cpu)\n",
        "x = x.to(device, non_blocking=True)",
        "class Net(nn.Module):\n    def forward(self, x):\n        return self.body(x.to(self.get_device()))\n",
        "def forward(self, obs):\n    return self.body(torch.as_tensor(obs).to(torch_device(self)))\n",
        "import torch\n\nif torch.cuda.is_available():\n    device = 'cuda'\nelse:\n    device = 'cpu'\nmodel = Net().to(device)\n",
        "def step(self, x):\n    return x.to(self.device)",
        "import torch\n\ncuda = True\ndevice = torch.device('cuda' if cuda else 'cpu')\nmodel = make().to(device)\n",
        # what the fix writes with the repository's own switch in scope
        "import torch\n\n\ndef train(loader, use_cuda):\n    device = torch.device('cuda' if use_cuda else 'cpu')\n"
        "    for imgs, theta in loader:\n        step(imgs.to(device), theta.to(device))\n",
        "import torch\n\n\ndef pair(x, y, gpu_ids):\n    device = torch.device('cuda' if len(gpu_ids) > 0 else 'cpu')\n"
        "    return x.to(device) + y.to(device)\n",
        "import torch\n\n\nclass Sub(Base):\n    def grow(self):\n"
        "        self.w = torch.ones(3).to(torch.device('cuda' if self.use_cuda else 'cpu'))\n",
        "import torch\n\n\nclass Sub(Base):\n    def __init__(self, gpu_ids):\n        super().__init__(gpu_ids)\n"
        "        w = torch.ones(3).to(torch.device('cuda' if len(self.gpu_ids) > 0 else 'cpu'))\n",
        "import torch\n\n\nclass VGGLoss(nn.Module):\n    def __init__(self, gpu_ids):\n"
        "        self.vgg = Vgg19().to(torch.device('cuda' if gpu_ids else 'cpu'))\n",
        "import torch\n\nargs = parser.parse_args()\nargs.cuda = not args.no_cuda and torch.cuda.is_available()\n"
        "device = torch.device('cuda' if args.cuda else 'cpu')\nmodel = Net().to(device)\n",
        "import torch\n\n\nclass GAN:\n    def noise(self, n):\n"
        "        return torch.rand(n, 1).to(torch.device('cuda' if self.gpu_mode else 'cpu'))\n",
        "import torch\n\n\ndef inputs(cfg, x):\n    return x.to(torch.device('cuda' if cfg.NUM_GPUS else 'cpu'))\n",
        "import torch\n\nargs = cli()\n\n\ndef train(loader, model):\n    for img in loader:\n"
        "        model(img.to(args.device))\n",
        "import torch\n\n\ndef define_G(gpu_ids):\n    return G().to(torch.device('cuda' if len(gpu_ids) > 0 else 'cpu'))\n",
        "import torch\n\n\ndef step(x, use_gpu):\n    return x.to('cuda' if use_gpu else 'cpu')\n",
        "import torch\n\ngpu_ids = [int(i) for i in opt.gpu_ids.split(',') if int(i) >= 0]\n"
        "device = torch.device('cuda' if len(gpu_ids) > 0 else 'cpu')\nmodel = Net().to(device)\n",
        "import torch\n\n\ndef run(x, ngpu):\n    if ngpu > 0:\n        x = x.to(torch.device('cuda' if ngpu > 0 else 'cpu'))\n    return x\n",
        "batch = {k: v.to(device) if v is not None else None for k, v in batch.items()}",
        "available = torch.cuda.is_available()",
        "model = model.cpu()",
        "x = x.to(torch.device('cpu'))",
        "import torch\nstream = torch.cuda.Stream()",
        "torch.cuda.manual_seed_all(0)",
        "use_cuda = args.cuda",
        "def cuda(self):\n    return self.to('cuda')",
        "@unittest.skipIf(not torch.cuda.is_available(), 'no GPU')\ndef test_kernel():\n    x = torch.ones(2).cuda()",
        "import triton\n\ndef launch(x):\n    y = x.cuda()\n    _kernel[(1,)](y)\n    return y",
        # code on TensorRT, a function that waits for the GPU
        "import tensorrt as trt\nimport torch\n\n\n"
        "def make_tensor(d):\n    return d if isinstance(d, torch.Tensor) else torch.tensor(d).cuda()\n",
        "import torch\n\n\ndef timed(model, x):\n    y = model(x.cuda())\n    torch.cuda.synchronize()\n    return y\n",
        "import bitsandbytes as bnb\n\ndef quantize(w):\n    return bnb.functional.quantize_4bit(w.cuda())",
        # a TensorRT conversion script (BiSeNet's tools/conver_to_trt.py)
        "import torch\nfrom torch2trt import torch2trt\n\nnet = build().cuda()\n"
        "trt_model = torch2trt(net, [torch.randn(1, 3, 64, 64).cuda()])\n",
        # DistributedDataParallel given device_ids, its module moved to the rank's device
        "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
        "def wrap(net, rank):\n    return DDP(net.to(rank), device_ids=[rank])\n",
        "import torch\n\n\nclass Trainer:\n    def __init__(self, net, rank):\n        net = net.to(f'cuda:{rank}')\n"
        "        self.net = torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank])\n",
        "import torch\n\n\ndef wrap(net, rank):\n    net.to(torch.device('cuda', rank))\n"
        "    return torch.nn.parallel.DistributedDataParallel(net, device_ids=[rank], output_device=rank)\n",
        # a script that cannot start without CUDA, its moves already spelt with a device
        "import torch\n\n\ndef setup(rank):\n    torch.cuda.set_device(rank)\n\n\ndef main():\n    setup(0)\n"
        "    x = torch.zeros(8, device='cuda')\n\n\nif __name__ == '__main__':\n    main()\n",
        "import torch\nimport torch.distributed as dist\n\ndist.init_process_group(backend='nccl')\n"
        "model = Net().to(torch.cuda.current_device())\n",
        "import torch\n\nif __name__ == '__main__':\n    torch.cuda.set_device(0)\n    x = torch.zeros(8, device=device)\n",
        "import torch\n\nprofile = False\nif profile:\n    run()\nelse:\n    torch.cuda.synchronize()\n    run()\n",
        # a test loop freeing CUDA IPC memory each step (MPRNet): raises without CUDA
        "import torch\n\n\ndef test(model, loader):\n    for x in loader:\n        torch.cuda.ipc_collect()\n"
        "        model(x.cuda())\n",
        "import torch\n\n\ndef copy(x):\n    with torch.cuda.stream(torch.cuda.default_stream()):\n        return x.cuda()\n",
        # a function beside, not reached from, one that waits for the GPU
        "import torch\n\n\nclass Loader:\n    def __init__(self, mean):\n        self.mean = mean.to(device)\n",
        "import torch\n\n\ndef evaluate(model, x):\n    return model(x.to(device))\n\n\n"
        "def timed(model, x):\n    y = model(x.cuda())\n    torch.cuda.synchronize()\n    return y\n",
        "import torch\nimport triton\n\n\n@triton.jit\ndef _kernel(x_ptr):\n    pass\n\n\n"
        "def test_kernel():\n    x = torch.randn(8).cuda()\n    assert fast_op(x).shape == x.shape",
        # a self-test's second section on whichever device there is, labelled as such
        "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
        "if __name__ == '__main__':\n    net = nn.Linear(4, 4)\n    print('=> Testing CPU...')\n    y1 = net(torch.rand(2, 4))\n"
        "    print(f'=> Testing {device}...')\n    net.to(device)\n    y2 = net(torch.rand(2, 4, device=device))\n",
        # device-agnostic code entering the device of its data on its CUDA branch (fairseq's FusedLayerNorm)
        "import torch\n\n\ndef forward(norm, x):\n    if not x.is_cuda:\n        return norm(x)\n"
        "    with torch.cuda.device(x.device):\n        return norm(x)\n",
        "import torch\n\n\ndef step(p, grad):\n    with torch.cuda.device(p.device):\n        p.add_(grad.to(p.device))\n",
        "import torch\n\n\ndef flops(model, shape, device):\n    with torch.cuda.device(0):\n"
        "        return complexity(model.to(device), shape)\n",
        "import torch\n\n\ndef prefetch(x, stream, device):\n    with torch.cuda.stream(stream):\n"
        "        return x.to(device, non_blocking=True)\n",
    )
    invalid = (
        Invalid(  # a comment closing the import block stays with it (flowtron's train.py)
            "import torch\nfrom torch.utils.data import DataLoader\n# =====END: ADDED FOR DISTRIBUTED======\n\n\n"
            "def build(net):\n    return net.cuda()\n",
            "import torch\nfrom torch.utils.data import DataLoader\n# =====END: ADDED FOR DISTRIBUTED======\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def build(net):\n    return net.to(device)\n",
        ),
        Invalid(  # an import with its fallback is part of the import block: the device line goes below it (Restormer)
            "import torch\nimport yaml\n\ntry:\n    from yaml import CLoader as Loader\nexcept ImportError:\n"
            "    from yaml import Loader\n\nmodel = build(Loader).cuda()\n",
            "import torch\nimport yaml\n\ntry:\n    from yaml import CLoader as Loader\nexcept ImportError:\n"
            '    from yaml import Loader\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
            "model = build(Loader).to(device)\n",
        ),
        Invalid(  # a method called nowhere in the file: torch.topk(corr, k) shows corr a tensor (PatchTST AutoCorrelation)
            "import math\nimport torch\nfrom torch import nn\n\n\nclass AutoCorrelation(nn.Module):\n"
            "    def time_delay_agg_full(self, values, corr):\n        length = values.shape[3]\n"
            "        init_index = torch.arange(length).unsqueeze(0).cuda()\n"
            "        delay = torch.topk(corr, int(math.log(length)), dim=-1)[1]\n        return init_index, delay\n",
            "import math\nimport torch\nfrom torch import nn\n\n\nclass AutoCorrelation(nn.Module):\n"
            "    def time_delay_agg_full(self, values, corr):\n        length = values.shape[3]\n"
            "        init_index = torch.arange(length).unsqueeze(0).to(corr.device)\n"
            "        delay = torch.topk(corr, int(math.log(length)), dim=-1)[1]\n        return init_index, delay\n",
        ),
        Invalid(  # the function already moves .to(gt_boxes.device), a parameter: that device (pytorch-faster-rcnn)
            "import numpy as np\nimport torch\n\n\ndef sample(all_rois, gt_boxes, fg_inds, n):\n"
            "    if fg_inds.numel() == 0:\n"
            "        bg_inds = torch.from_numpy(np.random.choice(all_rois.size(0), size=n)).long().cuda()\n"
            "    else:\n        bg_inds = torch.from_numpy(np.arange(n)).long().to(gt_boxes.device)\n"
            "    return all_rois[bg_inds]\n",
            "import numpy as np\nimport torch\n\n\ndef sample(all_rois, gt_boxes, fg_inds, n):\n"
            "    if fg_inds.numel() == 0:\n"
            "        bg_inds = torch.from_numpy(np.random.choice(all_rois.size(0), size=n)).long().to(gt_boxes.device)\n"
            "    else:\n        bg_inds = torch.from_numpy(np.arange(n)).long().to(gt_boxes.device)\n"
            "    return all_rois[bg_inds]\n",
        ),
        Invalid(  # a function moving its own arguments places host data: no argument's device there
            "import torch\n\n\ndef step(model, x, y):\n    out = model(x.cuda())\n    noise = torch.randn(3).cuda()\n"
            "    return torch.mean(out - y) + noise\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def step(model, x, y):\n    out = model(x.to(device))\n    noise = torch.randn(3).to(device)\n"
            "    return torch.mean(out - y) + noise\n",
            count=2,
        ),
        Invalid(  # moved through its data: the argument is host data here too
            "import torch\n\n\ndef f(model, x):\n    out = model(x.data.cuda())\n    m = torch.ones(3).cuda()\n"
            "    return torch.mean(x) * out * m\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def f(model, x):\n    out = model(x.data.to(device))\n    m = torch.ones(3).to(device)\n"
            "    return torch.mean(x) * out * m\n",
            count=2,
        ),
        Invalid(  # Variable(x) is x: a batch unpacked from the argument is host data (capsule-networks)
            "import torch\nfrom torch.autograd import Variable\n\n\ndef processor(sample):\n"
            "    data, labels, training = sample\n    data = augment(data.unsqueeze(1).float())\n"
            "    return Variable(data).cuda(), labels\n",
            "import torch\nfrom torch.autograd import Variable\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\ndef processor(sample):\n'
            "    data, labels, training = sample\n    data = augment(data.unsqueeze(1).float())\n"
            "    return Variable(data).to(device), labels\n",
        ),
        Invalid(  # torch.cat takes a list: no tensor parameter shown
            "import torch\n\n\ndef merge(parts, n):\n    m = torch.ones(n).cuda()\n    return torch.cat(parts), m\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def merge(parts, n):\n    m = torch.ones(n).to(device)\n    return torch.cat(parts), m\n",
        ),
        Invalid(  # a self-test's GPU section repeating its CPU one: reported, not rewritten (temporal-shift-module)
            "import torch\nfrom torch import nn\n\nif __name__ == '__main__':\n    net = nn.Linear(4, 4)\n"
            "    print('=> Testing CPU...')\n    y1 = net(torch.rand(2, 4))\n"
            "    print('=> Testing GPU...')\n    net.cuda()\n    y2 = net(torch.rand(2, 4).cuda())\n",
            "import torch\nfrom torch import nn\n\nif __name__ == '__main__':\n    net = nn.Linear(4, 4)\n"
            "    print('=> Testing CPU...')\n    y1 = net(torch.rand(2, 4))\n"
            "    print('=> Testing GPU...')\n    net.cuda()\n    y2 = net(torch.rand(2, 4).cuda())\n",
            count=2,
        ),
        Invalid(  # a loop only writing numbers into the moved tensor meets nothing: the use after it does (self-critical)
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
            "    def sample(self, it, n):\n        logprobs = F.log_softmax(self.proj(it), dim=-1)\n"
            "        mask = torch.zeros(logprobs.size()).cuda()\n        for i in range(n):\n            mask[i, 0] += 1\n"
            "        return logprobs + (mask * -0.693)\n",
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\nclass M(nn.Module):\n"
            "    def sample(self, it, n):\n        logprobs = F.log_softmax(self.proj(it), dim=-1)\n"
            "        mask = torch.zeros(logprobs.size()).to(logprobs.device)\n        for i in range(n):\n            mask[i, 0] += 1\n"
            "        return logprobs + (mask * -0.693)\n",
        ),
        Invalid(  # a decorator's wrapper(self, x) of a forward: the input's device (pytorch-semantic-segmentation)
            "import torch\n\n\ndef sliced_forward(single_forward):\n    def wrapper(self, x):\n"
            "        b, _, h, w = x.size()\n        total = torch.zeros((b, self.n, h, w)).cuda()\n"
            "        for s in self.scales:\n            total += single_forward(self, x * s)\n        return total\n"
            "    return wrapper\n",
            "import torch\n\n\ndef sliced_forward(single_forward):\n    def wrapper(self, x):\n"
            "        b, _, h, w = x.size()\n        total = torch.zeros((b, self.n, h, w)).to(x.device)\n"
            "        for s in self.scales:\n            total += single_forward(self, x * s)\n        return total\n"
            "    return wrapper\n",
        ),
        Invalid(
            "import torch\nmodel = Net().cuda()\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
            "model = Net().to(device)\n",
        ),
        Invalid(  # the class places its data with self.device (BasicSR's models, set up by the base class)
            "import torch\nfrom basicsr.models.sr_model import SRModel\n\n\nclass Model(SRModel):\n"
            "    def __init__(self, opt):\n        super().__init__(opt)\n        self.usm = USMSharp().cuda()\n\n"
            "    def feed_data(self, data):\n        self.lq = data['lq'].to(self.device)\n"
            "        self.kernel = data['kernel'].cuda()\n",
            "import torch\nfrom basicsr.models.sr_model import SRModel\n\n\nclass Model(SRModel):\n"
            "    def __init__(self, opt):\n        super().__init__(opt)\n        self.usm = USMSharp().to(self.device)\n\n"
            "    def feed_data(self, data):\n        self.lq = data['lq'].to(self.device)\n"
            "        self.kernel = data['kernel'].to(self.device)\n",
            count=2,
        ),
        Invalid(  # the inserted line quotes as the file does (Real-ESRGAN's double-quote-string-fixer)
            "import torch\n\nNAME = 'net'\nmodel = Net().cuda()\n",
            "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
            "NAME = 'net'\nmodel = Net().to(device)\n",
        ),
        Invalid(
            "import torch\n\ndef step(x, device):\n    return x.cuda(non_blocking=True)\n",
            "import torch\n\ndef step(x, device):\n    return x.to(device, non_blocking=True)\n",
        ),
        Invalid(  # under a CUDA check: reported, not rewritten (the branch only runs with CUDA)
            "import torch\nif torch.cuda.is_available():\n    x = x.cuda()\n",
            "import torch\nif torch.cuda.is_available():\n    x = x.cuda()\n",
        ),
        Invalid(  # a function calling one that waits for the GPU, and one only it calls: reported, not rewritten
            "import torch\n\n\ndef train_epoch(model, loader):\n    for x in loader:\n"
            "        model(x.cuda()).sum().backward()\n        torch.cuda.synchronize()\n\n\n"
            "def validate(model, loader):\n    return [model(x.cuda()) for x in loader]\n\n\n"
            "def main(model, loader):\n    model = model.cuda()\n    train_epoch(model, loader)\n"
            "    validate(model, loader)\n\n\nif __name__ == '__main__':\n    main(make(), load())\n",
            "import torch\n\n\ndef train_epoch(model, loader):\n    for x in loader:\n"
            "        model(x.cuda()).sum().backward()\n        torch.cuda.synchronize()\n\n\n"
            "def validate(model, loader):\n    return [model(x.cuda()) for x in loader]\n\n\n"
            "def main(model, loader):\n    model = model.cuda()\n    train_epoch(model, loader)\n"
            "    validate(model, loader)\n\n\nif __name__ == '__main__':\n    main(make(), load())\n",
            count=2,
        ),
        Invalid(  # a script that cannot start without CUDA (NCCL, set_device in __main__): reported, not rewritten
            "import torch\nimport torch.distributed as dist\n\n\ndef train(model, x):\n    return model(x.cuda())\n\n\n"
            "if __name__ == '__main__':\n    dist.init_process_group(backend='nccl')\n    torch.cuda.set_device(0)\n"
            "    train(make(), load())\n",
            "import torch\nimport torch.distributed as dist\n\n\ndef train(model, x):\n    return model(x.cuda())\n\n\n"
            "if __name__ == '__main__':\n    dist.init_process_group(backend='nccl')\n    torch.cuda.set_device(0)\n"
            "    train(make(), load())\n",
        ),
        Invalid(  # set_device two calls down the __main__ block: main() -> setup()
            "import torch\n\n\ndef setup(rank):\n    torch.cuda.set_device(rank)\n\n\ndef main():\n    setup(0)\n"
            "    x = torch.zeros(8).cuda()\n\n\nif __name__ == '__main__':\n    main()\n",
            "import torch\n\n\ndef setup(rank):\n    torch.cuda.set_device(rank)\n\n\ndef main():\n    setup(0)\n"
            "    x = torch.zeros(8).cuda()\n\n\nif __name__ == '__main__':\n    main()\n",
        ),
        Invalid(  # torch.cuda.ipc_collect() in a script's loop (MPRNet Deblurring/test.py), or a GPU query
            "import torch\n\nmodel = Net()\nmodel.cuda()\nfor x in loader:\n    torch.cuda.ipc_collect()\n"
            "    model(x.cuda())\n",
            "import torch\n\nmodel = Net()\nmodel.cuda()\nfor x in loader:\n    torch.cuda.ipc_collect()\n"
            "    model(x.cuda())\n",
            count=2,
        ),
        Invalid(
            "import torch\n\nprint(torch.cuda.get_device_name(0))\nx = torch.zeros(8).cuda()\n",
            "import torch\n\nprint(torch.cuda.get_device_name(0))\nx = torch.zeros(8).cuda()\n",
        ),
        Invalid(  # torch.cuda.synchronize() on the default path of a benchmark script (nanoGPT bench.py)
            "import torch\n\nprofile = False\nx = torch.zeros(8).cuda()\nif profile:\n    run(x)\nelse:\n"
            "    torch.cuda.synchronize()\n    run(x)\n",
            "import torch\n\nprofile = False\nx = torch.zeros(8).cuda()\nif profile:\n    run(x)\nelse:\n"
            "    torch.cuda.synchronize()\n    run(x)\n",
        ),
        Invalid(  # the device the function already places on, read off its argument (WaveGlow's Denoiser)
            "import torch\n\n\nclass Denoiser(torch.nn.Module):\n    def __init__(self, waveglow):\n"
            "        super().__init__()\n        self.stft = STFT().cuda()\n"
            "        mel = torch.zeros(1, 80, device=waveglow.upsample.weight.device)\n        self.bias = waveglow.infer(mel)\n",
            "import torch\n\n\nclass Denoiser(torch.nn.Module):\n    def __init__(self, waveglow):\n"
            "        super().__init__()\n        self.stft = STFT().to(waveglow.upsample.weight.device)\n"
            "        mel = torch.zeros(1, 80, device=waveglow.upsample.weight.device)\n        self.bias = waveglow.infer(mel)\n",
        ),
        Invalid(  # parts of torch.stack are tensors: idx[:, 0] shows idx is one (stable-dreamfusion's edge table)
            "import torch\n\n\ndef edge_faces(idx, pick):\n    edges = torch.stack((idx[:, 0], idx[:, 1]), dim=-1)\n"
            "    faces = torch.arange(idx.shape[0]).cuda()\n    return edges, faces, torch.cat([pick[0]]).cuda()\n",
            "import torch\n\n\ndef edge_faces(idx, pick):\n    edges = torch.stack((idx[:, 0], idx[:, 1]), dim=-1)\n"
            "    faces = torch.arange(idx.shape[0]).to(idx.device)\n    return edges, faces, torch.cat([pick[0]]).to(idx.device)\n",
            count=2,
        ),
        Invalid(  # a worker that sets its GPU up first, and tests written for two GPUs (semantic-segmentation-pytorch)
            "import torch\nfrom torch import nn\n\n\ndef worker(cfg, gpu_id):\n    torch.cuda.set_device(gpu_id)\n"
            "    model = build(cfg)\n    model.cuda()\n\n\ndef test_sync_train():\n    bn = nn.BatchNorm1d(10)\n"
            "    sync = DataParallelWithCallback(SyncBN(10), device_ids=[0, 1])\n    bn.cuda()\n    sync.cuda()\n",
            "import torch\nfrom torch import nn\n\n\ndef worker(cfg, gpu_id):\n    torch.cuda.set_device(gpu_id)\n"
            "    model = build(cfg)\n    model.cuda()\n\n\ndef test_sync_train():\n    bn = nn.BatchNorm1d(10)\n"
            "    sync = DataParallelWithCallback(SyncBN(10), device_ids=[0, 1])\n    bn.cuda()\n    sync.cuda()\n",
            count=3,
        ),
        Invalid(  # the GPU set up only for a distributed launch (BiSeNet's tools/evaluate.py): the run without one is portable
            "import os\nimport torch\n\n\ndef main(model):\n    if 'LOCAL_RANK' in os.environ:\n"
            "        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n    return evaluate(model)\n\n\n"
            "def evaluate(model):\n    model.cuda()\n    return model\n",
            "import os\nimport torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
            "def main(model):\n    if 'LOCAL_RANK' in os.environ:\n"
            "        torch.cuda.set_device(int(os.environ['LOCAL_RANK']))\n    return evaluate(model)\n\n\n"
            "def evaluate(model):\n    model.to(device)\n    return model\n",
        ),
        Invalid(  # the GPU set up only where there is one, and one GPU named: the moves get the device
            "import torch\nfrom torch import nn\n\n\ndef worker(cfg, gpu_id):\n    if torch.cuda.is_available():\n"
            "        torch.cuda.set_device(gpu_id)\n    model = build(cfg)\n    model.cuda()\n"
            "    return nn.DataParallel(model, device_ids=[0]).cuda()\n",
            'import torch\nfrom torch import nn\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def worker(cfg, gpu_id):\n    if torch.cuda.is_available():\n"
            "        torch.cuda.set_device(gpu_id)\n    model = build(cfg)\n    model.to(device)\n"
            "    return nn.DataParallel(model, device_ids=[0]).to(device)\n",
            count=2,
        ),
        Invalid(  # main() ends the program without a GPU (DARTS, P-DARTS): its train() loop stays as written
            "import sys\nimport torch\n\n\ndef train(loader, model):\n    for x in loader:\n        model(x.cuda())\n\n\n"
            "def main():\n    if not torch.cuda.is_available():\n        sys.exit(1)\n    train(make_loader(), build().cuda())\n\n\n"
            "if __name__ == '__main__':\n    main()\n",
            "import sys\nimport torch\n\n\ndef train(loader, model):\n    for x in loader:\n        model(x.cuda())\n\n\n"
            "def main():\n    if not torch.cuda.is_available():\n        sys.exit(1)\n    train(make_loader(), build().cuda())\n\n\n"
            "if __name__ == '__main__':\n    main()\n",
            count=2,
        ),
        Invalid(  # refusing only a GPU the user asked for: the script runs on the CPU otherwise
            "import torch\n\n\ndef run():\n    return torch.zeros(8).cuda()\n\n\ndef main(args):\n"
            "    if args.cuda and not torch.cuda.is_available():\n        raise SystemExit('no GPU')\n    run()\n\n\n"
            "if __name__ == '__main__':\n    main(parse())\n",
            "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
            "def run():\n    return torch.zeros(8).to(device)\n\n\ndef main(args):\n"
            "    if args.cuda and not torch.cuda.is_available():\n        raise SystemExit('no GPU')\n    run()\n\n\n"
            "if __name__ == '__main__':\n    main(parse())\n",
        ),
        Invalid(  # set_device under a device check: the script still runs on the CPU
            "import torch\n\nif __name__ == '__main__':\n    if torch.cuda.is_available():\n"
            "        torch.cuda.set_device(0)\n    x = torch.zeros(8).cuda()\n",
            "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n"
            "if __name__ == '__main__':\n    if torch.cuda.is_available():\n"
            "        torch.cuda.set_device(0)\n    x = torch.zeros(8).to(device)\n",
        ),
        Invalid(  # DistributedDataParallel given device_ids (list or tuple) refuses a CPU module: reported, not rewritten
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
            "def wrap(net, rank):\n    return DDP(net.cuda(rank), device_ids=(rank,))\n",
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
            "def wrap(net, rank):\n    return DDP(net.cuda(rank), device_ids=(rank,))\n",
        ),
        Invalid(  # the same marks the other methods of its class (XMem's trainer)
            "import torch\nfrom torch import nn\n\n\nclass Trainer:\n    def __init__(self, net, rank):\n"
            "        self.net = nn.parallel.DistributedDataParallel(net.cuda(), device_ids=[rank], output_device=rank)\n\n"
            "    def do_pass(self, data):\n        return self.net(data.cuda(non_blocking=True))\n",
            "import torch\nfrom torch import nn\n\n\nclass Trainer:\n    def __init__(self, net, rank):\n"
            "        self.net = nn.parallel.DistributedDataParallel(net.cuda(), device_ids=[rank], output_device=rank)\n\n"
            "    def do_pass(self, data):\n        return self.net(data.cuda(non_blocking=True))\n",
            count=2,
        ),
        Invalid(  # entering torch.cuda.device(0) raises without CUDA (PatchTST's test_params_flop): reported, not rewritten
            "import torch\n\n\ndef flops(model, shape):\n    with torch.cuda.device(0):\n"
            "        return complexity(model.cuda(), shape)\n",
            "import torch\n\n\ndef flops(model, shape):\n    with torch.cuda.device(0):\n"
            "        return complexity(model.cuda(), shape)\n",
        ),
        Invalid(  # the same on a script's default path marks the whole script
            "import torch\n\nmodel = Net().cuda()\nwith torch.no_grad(), torch.cuda.device(torch.device('cuda:1')):\n"
            "    print(model(x))\n",
            "import torch\n\nmodel = Net().cuda()\nwith torch.no_grad(), torch.cuda.device(torch.device('cuda:1')):\n"
            "    print(model(x))\n",
        ),
        Invalid(  # a tensor's get_device() is -1 on the CPU, where entering does nothing: rewritten as before
            "import torch\n\n\ndef run(net, x):\n    with torch.cuda.device(x.get_device()):\n"
            "        return net(x.cuda())\n",
            "import torch\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def run(net, x):\n    with torch.cuda.device(x.get_device()):\n        return net(x.to(device))\n",
        ),
        Invalid(  # entered under a device check, or made and never entered: rewritten
            "import torch\n\nctx = torch.cuda.device(0)\n\n\ndef run(net, x):\n    if torch.cuda.is_available():\n"
            "        with torch.cuda.device(0):\n            net(x)\n    return net.cuda()\n",
            "import torch\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\nctx = torch.cuda.device(0)\n\n\n'
            "def run(net, x):\n    if torch.cuda.is_available():\n"
            "        with torch.cuda.device(0):\n            net(x)\n    return net.to(device)\n",
        ),
        Invalid(  # without device_ids DDP takes a CPU module (gloo): rewritten
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
            "def wrap(net):\n    return DDP(net.cuda(), find_unused_parameters=True)\n",
            "import torch\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def wrap(net):\n    return DDP(net.to(device), find_unused_parameters=True)\n",
        ),
        Invalid(  # the other methods of a class one of whose methods uses CUDA streams (timm's PrefetchLoader)
            "import torch\n\n\nclass PrefetchLoader:\n    def __init__(self, loader, mean):\n"
            "        self.loader = loader\n        self.mean = torch.tensor(mean).cuda().view(1, 3, 1, 1)\n\n"
            "    def __iter__(self):\n        stream = torch.cuda.Stream()\n        for x in self.loader:\n"
            "            with torch.cuda.stream(stream):\n                x = x.cuda(non_blocking=True).sub_(self.mean)\n"
            "            yield x\n",
            "import torch\n\n\nclass PrefetchLoader:\n    def __init__(self, loader, mean):\n"
            "        self.loader = loader\n        self.mean = torch.tensor(mean).cuda().view(1, 3, 1, 1)\n\n"
            "    def __iter__(self):\n        stream = torch.cuda.Stream()\n        for x in self.loader:\n"
            "            with torch.cuda.stream(stream):\n                x = x.cuda(non_blocking=True).sub_(self.mean)\n"
            "            yield x\n",
        ),
        Invalid(  # code named for the GPU is CUDA-only by construction: reported, not rewritten
            "class ToGPU:\n    def __call__(self, x):\n        return x.cuda()\n",
            "class ToGPU:\n    def __call__(self, x):\n        return x.cuda()\n",
        ),
        Invalid(
            "import torch\n\ndef maybe_to_gpu(model, use_gpu):\n    return model.cuda() if use_gpu else model\n",
            "import torch\n\ndef maybe_to_gpu(model, use_gpu):\n    return model.cuda() if use_gpu else model\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n"
            "    def forward(self, x: torch.Tensor):\n        h = torch.zeros(3).cuda()\n        return x + h\n",
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n"
            "    def forward(self, x: torch.Tensor):\n        h = torch.zeros(3).to(x.device)\n        return x + h\n",
        ),
        Invalid("model.cuda()\nbatch.cuda()\n", count=2),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Decoder(nn.Module):\n    def forward(self, batch_size, encoded):\n"
            "        hidden = torch.zeros(1, batch_size, 4).cuda()\n        return encoded.unsqueeze(0) + hidden\n",
            "import torch\nfrom torch import nn\n\nclass Decoder(nn.Module):\n    def forward(self, batch_size, encoded):\n"
            "        hidden = torch.zeros(1, batch_size, 4).to(encoded.device)\n        return encoded.unsqueeze(0) + hidden\n",
        ),
        Invalid(  # an operand of the same operation is on the device .cuda() chose (siren's losses)
            "import torch\n\n\ndef data_term(y: torch.Tensor, rec: torch.Tensor):\n"
            "    return torch.where(rec != 0, y - rec, torch.tensor([0.0]).cuda())\n",
            "import torch\n\n\ndef data_term(y: torch.Tensor, rec: torch.Tensor):\n"
            "    return torch.where(rec != 0, y - rec, torch.tensor([0.0]).to(rec.device))\n",
        ),
        Invalid(  # bound to a name, then combined in the next statement
            "import torch\n\n\ndef weighted(g: torch.Tensor, gt: torch.Tensor):\n"
            "    grads = torch.cat((g, g), dim=-1)\n    weights = torch.tensor([10.0, 1.0]).cuda()\n"
            "    return (weights * (grads[0:2] - gt)).mean()\n",
            "import torch\n\n\ndef weighted(g: torch.Tensor, gt: torch.Tensor):\n"
            "    grads = torch.cat((g, g), dim=-1)\n    weights = torch.tensor([10.0, 1.0]).to(grads.device)\n"
            "    return (weights * (grads[0:2] - gt)).mean()\n",
        ),
        Invalid(  # ... or in the first later statement that reads it (fastMRI's orientation adversary)
            "import torch\n\n\ndef reorient(batch, prediction: torch.Tensor):\n"
            "    is_rotated = batch['rotated'].cuda()\n    rotated = prediction.transpose(-2, -1)\n"
            "    return torch.where(is_rotated, rotated, prediction)\n",
            "import torch\n\n\ndef reorient(batch, prediction: torch.Tensor):\n"
            "    is_rotated = batch['rotated'].to(prediction.device)\n    rotated = prediction.transpose(-2, -1)\n"
            "    return torch.where(is_rotated, rotated, prediction)\n",
        ),
        Invalid(  # the receiver of a method only tensors have is a tensor (pix2pixHD's one-hot labels)
            "import torch\n\n\ndef encode(make, label_map, n):\n    input_label = make(1, n, 4, 4).zero_()\n"
            "    return input_label.scatter_(1, label_map.long().cuda(), 1.0)\n",
            "import torch\n\n\ndef encode(make, label_map, n):\n    input_label = make(1, n, 4, 4).zero_()\n"
            "    return input_label.scatter_(1, label_map.long().to(input_label.device), 1.0)\n",
        ),
        Invalid(  # Variable(...) is the tensor it wraps; what the bound name meets later (TorchSSL's VAT loss)
            "import torch\nfrom torch.autograd import Variable\n\n\ndef vat_loss(model, ul_x: torch.Tensor, d):\n"
            "    d = Variable(d.cuda(), requires_grad=True)\n    r_adv = 1e-6 * d\n    return model(ul_x + r_adv)\n",
            "import torch\nfrom torch.autograd import Variable\n\n\ndef vat_loss(model, ul_x: torch.Tensor, d):\n"
            "    d = Variable(d.to(ul_x.device), requires_grad=True)\n    r_adv = 1e-6 * d\n    return model(ul_x + r_adv)\n",
        ),
        Invalid(  # a torch.nn loss made without tensors holds none: the move goes rather than add a device line
            "import torch\nfrom torch import nn\n\n\ndef get_loss(outputs, target):\n"
            "    criterion = nn.MSELoss(reduction='mean').cuda()\n    return sum(criterion(o, target) for o in outputs)\n",
            "import torch\nfrom torch import nn\n\n\ndef get_loss(outputs, target):\n"
            "    criterion = nn.MSELoss(reduction='mean')\n    return sum(criterion(o, target) for o in outputs)\n",
        ),
        Invalid(  # made on the device of the tensor it copies: the move goes (Tf-KD's regularizer)
            "import torch\n\n\ndef loss_reg(outputs: torch.Tensor, p):\n    soft = torch.ones_like(outputs).cuda()\n"
            "    return soft * p\n",
            "import torch\n\n\ndef loss_reg(outputs: torch.Tensor, p):\n    soft = torch.ones_like(outputs)\n"
            "    return soft * p\n",
        ),
        Invalid(  # joined and reshaped, then met with a tensor computed from an argument (JDE's generate_anchor)
            "import torch\n\n\ndef generate_anchor(h, w, anchor_wh):\n"
            "    yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w))\n    xx, yy = xx.cuda(), yy.cuda()\n"
            "    mesh = torch.stack([xx, yy], dim=0)\n    mesh = mesh.unsqueeze(0).float()\n"
            "    offsets = anchor_wh.unsqueeze(-1).unsqueeze(-1).repeat(1, 1, h, w)\n"
            "    return torch.cat([mesh, offsets], dim=1)\n",
            "import torch\n\n\ndef generate_anchor(h, w, anchor_wh):\n"
            "    yy, xx = torch.meshgrid(torch.arange(h), torch.arange(w))\n"
            "    xx, yy = xx.to(anchor_wh.device), yy.to(anchor_wh.device)\n"
            "    mesh = torch.stack([xx, yy], dim=0)\n    mesh = mesh.unsqueeze(0).float()\n"
            "    offsets = anchor_wh.unsqueeze(-1).unsqueeze(-1).repeat(1, 1, h, w)\n"
            "    return torch.cat([mesh, offsets], dim=1)\n",
            count=2,
        ),
        Invalid(  # a partner bound again in between is not that tensor at the move
            "import torch\n\n\ndef f(a: torch.Tensor, g: torch.Tensor):\n    w = a.cuda()\n    g = g.cuda()\n"
            "    return w * g\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def f(a: torch.Tensor, g: torch.Tensor):\n    w = a.to(device)\n    g = g.to(w.device)\n"
            "    return w * g\n",
            count=2,
        ),
        Invalid(  # a factory sized from a tensor argument goes with it, as TDL002 places it
            "import torch\n\n\ndef loc_loss(pred, gt: torch.Tensor):\n"
            "    weight = torch.zeros(gt.size()).cuda()\n    return weight * (pred - gt)\n",
            "import torch\n\n\ndef loc_loss(pred, gt: torch.Tensor):\n"
            "    weight = torch.zeros(gt.size()).to(gt.device)\n    return weight * (pred - gt)\n",
        ),
        Invalid(  # ... also through sizes unpacked from a tuple (Tf-KD's label smoothing)
            "import torch\n\n\ndef loss_ls(outputs: torch.Tensor, labels):\n    n, c = outputs.size(0), outputs.size(1)\n"
            "    return torch.full((n, c), 0.1).cuda()\n",
            "import torch\n\n\ndef loss_ls(outputs: torch.Tensor, labels):\n    n, c = outputs.size(0), outputs.size(1)\n"
            "    return torch.full((n, c), 0.1).to(outputs.device)\n",
        ),
        Invalid(  # code of the project may move its arguments itself: its other arguments say nothing
            "import torch\n\n\ndef report(w: torch.Tensor, dq: torch.Tensor):\n    print(sqnr(w, dq.cuda()))\n",
            "import torch\n\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n\n\n"
            "def report(w: torch.Tensor, dq: torch.Tensor):\n    print(sqnr(w, dq.to(device)))\n",
        ),
        Invalid(  # the file's own CUDA switch guards its other moves: the device line follows it
            "import torch\n\nuse_cuda = True\nmodel = make()\nif use_cuda:\n    model.cuda()\n\n\n"
            "def sample(probs):\n    return model.decode(probs.cuda())\n",
            "import torch\n\nuse_cuda = True\ndevice = torch.device(\"cuda\" if use_cuda else \"cpu\")\n"
            "model = make()\nif use_cuda:\n    model.cuda()\n\n\n"
            "def sample(probs):\n    return model.decode(probs.to(device))\n",
            count=2,
        ),
        Invalid(  # a script's own switch, an attribute of its parsed arguments: the line goes under it
            "import argparse\n\nimport torch\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--no-cuda', action='store_true')\nargs = parser.parse_args()\n"
            "args.cuda = not args.no_cuda and torch.cuda.is_available()\n\nmodel = Net().cuda()\n",
            "import argparse\n\nimport torch\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--no-cuda', action='store_true')\nargs = parser.parse_args()\n"
            "args.cuda = not args.no_cuda and torch.cuda.is_available()\n"
            "device = torch.device('cuda' if args.cuda else 'cpu')\n\nmodel = Net().to(device)\n",
        ),
        Invalid(  # a list of GPUs filled in place: the line goes after the loop that fills it
            "import torch\n\ngpu_ids = []\nfor i in opt.gpu_ids.split(','):\n    if int(i) >= 0:\n"
            "        gpu_ids.append(int(i))\nif len(gpu_ids) > 0:\n    torch.cuda.set_device(gpu_ids[0])\n\n\n"
            "def train(model):\n    return model.cuda()\n",
            "import torch\n\ngpu_ids = []\nfor i in opt.gpu_ids.split(','):\n    if int(i) >= 0:\n"
            "        gpu_ids.append(int(i))\ndevice = torch.device('cuda' if len(gpu_ids) > 0 else 'cpu')\n"
            "if len(gpu_ids) > 0:\n    torch.cuda.set_device(gpu_ids[0])\n\n\n"
            "def train(model):\n    return model.to(device)\n",
        ),
        Invalid(  # ... and module-level code above the switch gets no device line that contradicts it
            "import torch\n\nmodel = Net().cuda()\nuse_gpu = True\nif use_gpu:\n    torch.cuda.manual_seed(0)\n",
            "import torch\n\nmodel = Net().cuda()\nuse_gpu = True\nif use_gpu:\n    torch.cuda.manual_seed(0)\n",
        ),
        Invalid(  # a parameter named for the switch: an empty list of GPUs is the CPU, tested as the file does
            "import torch\n\n\ndef define_G(gpu_ids=[]):\n    net = G()\n    if len(gpu_ids) > 0:\n"
            "        net.cuda(gpu_ids[0])\n    return net\n\n\nclass VGGLoss(nn.Module):\n"
            "    def __init__(self, gpu_ids):\n        super().__init__()\n        self.vgg = Vgg19().cuda()\n",
            "import torch\n\n\ndef define_G(gpu_ids=[]):\n    net = G()\n    if len(gpu_ids) > 0:\n"
            "        net.cuda(gpu_ids[0])\n    return net\n\n\nclass VGGLoss(nn.Module):\n"
            "    def __init__(self, gpu_ids):\n        super().__init__()\n"
            "        self.vgg = Vgg19().to(torch.device(\"cuda\" if len(gpu_ids) > 0 else \"cpu\"))\n",
            count=2,
        ),
        Invalid(  # a count of GPUs that nothing tests is no switch (DCGAN's ngpu defaults to 1)
            "import torch\n\n\nclass Generator(nn.Module):\n    def __init__(self, ngpu):\n"
            "        super().__init__()\n        self.ngpu = ngpu\n        self.noise = torch.zeros(1).cuda()\n",
            "import torch\n\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n\n\n"
            "class Generator(nn.Module):\n    def __init__(self, ngpu):\n"
            "        super().__init__()\n        self.ngpu = ngpu\n        self.noise = torch.zeros(1).to(device)\n",
        ),
        Invalid(  # the class guards its other moves with its own switch
            "import torch\n\n\nclass GAN:\n    def __init__(self, args):\n        self.gpu_mode = args.gpu_mode\n"
            "        self.G = G()\n        if self.gpu_mode:\n            self.G.cuda()\n\n"
            "    def noise(self, n):\n        return torch.rand(n, 1).cuda()\n",
            "import torch\n\n\nclass GAN:\n    def __init__(self, args):\n        self.gpu_mode = args.gpu_mode\n"
            "        self.G = G()\n        if self.gpu_mode:\n            self.G.cuda()\n\n"
            "    def noise(self, n):\n        return torch.rand(n, 1).to(torch.device(\"cuda\" if self.gpu_mode else \"cpu\"))\n",
            count=2,
        ),
        Invalid(  # a subclass runs under the switch its base class guards moves with
            "import torch\n\n\nclass Base:\n    def initialize(self, net):\n        self.use_cuda = True\n"
            "        if self.use_cuda:\n            self.net = net.cuda()\n\n\n"
            "class Sub(Base):\n    def initialize(self, net, w):\n        Base.initialize(self, net)\n"
            "        self.w = torch.tensor(w).cuda()\n",
            "import torch\n\n\nclass Base:\n    def initialize(self, net):\n        self.use_cuda = True\n"
            "        if self.use_cuda:\n            self.net = net.cuda()\n\n\n"
            "class Sub(Base):\n    def initialize(self, net, w):\n        Base.initialize(self, net)\n"
            "        self.w = torch.tensor(w).to(torch.device(\"cuda\" if self.use_cuda else \"cpu\"))\n",
            count=2,
        ),
        Invalid(  # in the subclass's __init__, once the base's __init__ set the switch
            "import torch\n\n\nclass Base(nn.Module):\n    def __init__(self, gpu_ids):\n        super().__init__()\n"
            "        self.gpu_ids = gpu_ids\n        if len(self.gpu_ids) > 0:\n            self.cuda()\n\n\n"
            "class Sub(Base):\n    def __init__(self, gpu_ids):\n        super().__init__(gpu_ids)\n"
            "        w = torch.ones(3).cuda()\n",
            "import torch\n\n\nclass Base(nn.Module):\n    def __init__(self, gpu_ids):\n        super().__init__()\n"
            "        self.gpu_ids = gpu_ids\n        if len(self.gpu_ids) > 0:\n            self.cuda()\n\n\n"
            "class Sub(Base):\n    def __init__(self, gpu_ids):\n        super().__init__(gpu_ids)\n"
            "        w = torch.ones(3).to(torch.device(\"cuda\" if len(self.gpu_ids) > 0 else \"cpu\"))\n",
            count=2,
        ),
        Invalid(  # the class's switch chooses a CUDA type (its moves live in another module)
            "import torch\n\n\nclass Model(nn.Module):\n    def initialize(self, opt):\n"
            "        self.gpu_ids = opt.gpu_ids\n"
            "        self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor\n\n"
            "    def grow(self):\n        self.netG.cuda()\n",
            "import torch\n\n\nclass Model(nn.Module):\n    def initialize(self, opt):\n"
            "        self.gpu_ids = opt.gpu_ids\n"
            "        self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.Tensor\n\n"
            "    def grow(self):\n        self.netG.to(torch.device(\"cuda\" if self.gpu_ids else \"cpu\"))\n",
        ),
        Invalid(  # the script's switch, parsed and tested in its __main__ block, read by a function defined there
            "import torch\n\nif __name__ == '__main__':\n    args = parser.parse_args()\n    net = Net()\n"
            "    if args.ngpu > 0:\n        net.cuda()\n\n    def train(loader):\n        for x in loader:\n"
            "            net(x.cuda())\n",
            "import torch\n\nif __name__ == '__main__':\n    args = parser.parse_args()\n    net = Net()\n"
            "    if args.ngpu > 0:\n        net.cuda()\n\n    def train(loader):\n        for x in loader:\n"
            "            net(x.to(torch.device('cuda' if args.ngpu > 0 else 'cpu')))\n",
            count=2,
        ),
        Invalid(  # ... and by a top-level function that already reads the parsed arguments as a global
            "import torch\n\n\ndef train(loader):\n    for x in loader:\n        net(x.cuda(), args.lr)\n\n\n"
            "if __name__ == '__main__':\n    args = parser.parse_args()\n    if args.cuda:\n        net.cuda()\n",
            "import torch\n\n\ndef train(loader):\n    for x in loader:\n"
            "        net(x.to(torch.device('cuda' if args.cuda else 'cpu')), args.lr)\n\n\n"
            "if __name__ == '__main__':\n    args = parser.parse_args()\n    if args.cuda:\n        net.cuda()\n",
            count=2,
        ),
        Invalid(  # a switch device needed at several sites of a function: bound once, before the first
            "import torch\n\n\ndef train(loader, model, use_cuda):\n    \"\"\"One epoch.\"\"\"\n"
            "    if use_cuda:\n        model.cuda()\n    # the batches\n    for imgs, theta in loader:\n"
            "        imgs = torch.autograd.Variable(imgs.cuda())\n        theta = torch.autograd.Variable(theta.cuda())\n",
            "import torch\n\n\ndef train(loader, model, use_cuda):\n    \"\"\"One epoch.\"\"\"\n"
            "    if use_cuda:\n        model.cuda()\n"
            "    device = torch.device(\"cuda\" if use_cuda else \"cpu\")\n    # the batches\n    for imgs, theta in loader:\n"
            "        imgs = torch.autograd.Variable(imgs.to(device))\n        theta = torch.autograd.Variable(theta.to(device))\n",
            count=3,
        ),
        Invalid(  # two moves in one statement, the switch a parameter: the device bound once, then used
            "import torch\n\n\ndef pair(x, y, gpu_ids):\n    if len(gpu_ids) > 0:\n        net.cuda()\n"
            "    return x.cuda() + y.cuda()\n",
            "import torch\n\n\ndef pair(x, y, gpu_ids):\n"
            "    if len(gpu_ids) > 0:\n        net.cuda()\n"
            "    device = torch.device(\"cuda\" if len(gpu_ids) > 0 else \"cpu\")\n"
            "    return x.to(device) + y.to(device)\n",
            count=3,
        ),
        Invalid(  # two moves in one statement would each write the switch inline: reported without a fix
            "import torch\n\n\ndef test(loader):\n    args = get_args()\n    if args.ngpu > 0:\n"
            "        net.cuda()\n    for x, y in loader:\n        x, y = x.cuda(), y.cuda()\n",
            "import torch\n\n\ndef test(loader):\n    args = get_args()\n    if args.ngpu > 0:\n"
            "        net.cuda()\n    for x, y in loader:\n        x, y = x.cuda(), y.cuda()\n",
            count=3,
        ),
        Invalid(  # a count of GPUs in a configuration the function receives: 0 is the CPU
            "import torch\n\n\ndef inputs(cfg, x, pair):\n    if pair:\n        if cfg.NUM_GPUS:\n"
            "            x = x.cuda(non_blocking=True)\n    else:\n        x = x.cuda(non_blocking=True)\n"
            "    return x\n",
            "import torch\n\n\ndef inputs(cfg, x, pair):\n    if pair:\n        if cfg.NUM_GPUS:\n"
            "            x = x.cuda(non_blocking=True)\n    else:\n"
            "        x = x.to(torch.device(\"cuda\" if cfg.NUM_GPUS else \"cpu\"), non_blocking=True)\n"
            "    return x\n",
            count=2,
        ),
        Invalid(  # a local switch set below the site: reported without a fix
            "import torch\n\n\ndef main(parser):\n    model = Net().cuda()\n    args = parser.parse_args()\n"
            "    if args.cuda:\n        model.load(args.path)\n        torch.cuda.manual_seed(args.seed)\n",
            "import torch\n\n\ndef main(parser):\n    model = Net().cuda()\n    args = parser.parse_args()\n"
            "    if args.cuda:\n        model.load(args.path)\n        torch.cuda.manual_seed(args.seed)\n",
        ),
        Invalid(  # the script keeps the device its own switch chose on its arguments: reused
            "import argparse\n\nimport torch\n\n\ndef cli():\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument('--disable-cuda', action='store_true')\n    args = parser.parse_args()\n"
            "    args.device = torch.device('cpu')\n    if not args.disable_cuda and torch.cuda.is_available():\n"
            "        args.device = torch.device('cuda')\n    return args\n\n\nargs = cli()\n\n\n"
            "def train(loader, model):\n    for img in loader:\n        model(img.cuda())\n\n\nmodel = Net().cuda()\n",
            "import argparse\n\nimport torch\n\n\ndef cli():\n    parser = argparse.ArgumentParser()\n"
            "    parser.add_argument('--disable-cuda', action='store_true')\n    args = parser.parse_args()\n"
            "    args.device = torch.device('cpu')\n    if not args.disable_cuda and torch.cuda.is_available():\n"
            "        args.device = torch.device('cuda')\n    return args\n\n\nargs = cli()\n\n\n"
            "def train(loader, model):\n    for img in loader:\n        model(img.to(args.device))\n\n\n"
            "model = Net().to(args.device)\n",
            count=2,
        ),
        Invalid(  # the class's own way to ask for its device: a method whose every return is a device
            "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def get_device(self):\n"
            "        return next(self.parameters()).device\n\n    def forward(self, x):\n"
            "        return self.body(x.cuda())\n",
            "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):\n    def get_device(self):\n"
            "        return next(self.parameters()).device\n\n    def forward(self, x):\n"
            "        return self.body(x.to(self.get_device()))\n",
        ),
        Invalid(  # the file's function giving a module's device, in the module's forward
            "import torch\nfrom torch import nn\n\n\ndef module_device(module):\n"
            "    return next(module.parameters()).device\n\n\nclass Net(nn.Module):\n"
            "    def forward(self, obs):\n        obs = torch.as_tensor(obs).cuda()\n        return self.body(obs)\n",
            "import torch\nfrom torch import nn\n\n\ndef module_device(module):\n"
            "    return next(module.parameters()).device\n\n\nclass Net(nn.Module):\n"
            "    def forward(self, obs):\n        obs = torch.as_tensor(obs).to(module_device(self))\n        return self.body(obs)\n",
        ),
        Invalid(  # the project's own device, imported (diffusers' and transformers' tests)
            "import torch\n\nfrom ..testing_utils import torch_device\n\n\ndef test_step(model):\n"
            "    return model.cuda()\n",
            "import torch\n\nfrom ..testing_utils import torch_device\n\n\ndef test_step(model):\n"
            "    return model.to(torch_device)\n",
        ),
        Invalid(  # a graph (g.num_nodes()) is no tensor: never g.device
            "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def forward(self, g, h):\n"
            "        mask = torch.ones(g.num_nodes(), 1).cuda()\n        return h * mask\n",
            'import torch\nfrom torch import nn\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
            "\n\nclass Model(nn.Module):\n    def forward(self, g, h):\n"
            "        mask = torch.ones(g.num_nodes(), 1).to(device)\n        return h * mask\n",
        ),
        Invalid(  # a batch read by key is a mapping: `batch.device` does not exist
            "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def forward(self, batch):\n"
            "        return batch['images'].cuda(non_blocking=True)\n",
            "import torch\nfrom torch import nn\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "\n\nclass Model(nn.Module):\n    def forward(self, batch):\n"
            "        return batch['images'].to(device, non_blocking=True)\n",
        ),
        Invalid(
            "def fused(weight, bias, y):\n    w = weight.cuda(bias.device)\n    return y.cuda(bias.get_device()) + w\n",
            "def fused(weight, bias, y):\n    w = weight.to(bias.device)\n    return y.to(bias.device) + w\n",
            count=2,
        ),
        Invalid(  # a conditional that tests no device is no CUDA guard (NeMo's CLIP data step)
            "import torch\n\ndef step(batch):\n    return {k: v.cuda(non_blocking=True) if v is not None else None for k, v in batch.items()}\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def step(batch):\n    return {k: v.to(device, non_blocking=True) if v is not None else None for k, v in batch.items()}\n",
        ),
        Invalid(  # a device chosen as the CPU on purpose is not where .cuda() placed (dinov2 eval/utils.py)
            "import torch\n\n\ndef extract(model, loader, gather_on_cpu=False):\n"
            '    gather_device = torch.device("cpu") if gather_on_cpu else torch.device("cuda")\n'
            "    for samples in loader:\n        samples = samples.cuda(non_blocking=True)\n"
            "        feats = model(samples).to(gather_device)\n    return feats\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def extract(model, loader, gather_on_cpu=False):\n"
            '    gather_device = torch.device("cpu") if gather_on_cpu else torch.device("cuda")\n'
            "    for samples in loader:\n        samples = samples.to(device, non_blocking=True)\n"
            "        feats = model(samples).to(gather_device)\n    return feats\n",
        ),
        Invalid(  # a variable naming the CPU is not where .cuda() placed (deep_sort's nms: cpu_device)
            "import torch\n\n\ndef nms(model, boxes):\n    cpu_device = torch.device('cpu')\n"
            "    model = model.cuda()\n    return model(boxes).to(cpu_device)\n",
            "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
            "def nms(model, boxes):\n    cpu_device = torch.device('cpu')\n"
            "    model = model.to(device)\n    return model(boxes).to(cpu_device)\n",
        ),
        Invalid(  # the portable idiom written as a conditional is the device
            "import torch\n\n\ndef run(model, x):\n"
            '    dev = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n'
            "    return model(x.cuda())\n",
            "import torch\n\n\ndef run(model, x):\n"
            '    dev = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n'
            "    return model(x.to(dev))\n",
        ),
        Invalid(  # an if/else statement choosing the device is the device, as the conditional expression
            "import torch\n\nif torch.cuda.is_available():\n    device = 'cuda'\nelse:\n    device = 'cpu'\n\n"
            "model = Net().cuda()\n",
            "import torch\n\nif torch.cuda.is_available():\n    device = 'cuda'\nelse:\n    device = 'cpu'\n\n"
            "model = Net().to(device)\n",
        ),
        Invalid(  # ... unless it chooses the CPU on purpose (also for self.device set so)
            "import torch\n\n\nclass Runner:\n    def __init__(self, offload):\n        if offload:\n"
            "            self.device = 'cpu'\n        else:\n            self.device = 'cuda'\n\n"
            "    def step(self, x):\n        return x.cuda()\n",
            "import torch\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
            "class Runner:\n    def __init__(self, offload):\n        if offload:\n"
            "            self.device = 'cpu'\n        else:\n            self.device = 'cuda'\n\n"
            "    def step(self, x):\n        return x.to(device)\n",
        ),
        Invalid(  # a flag asking for CUDA with the CPU as its fallback chooses the run's device
            "import torch\n\n\ndef run(model, x, args):\n"
            '    device = torch.device("cuda" if args.cuda else "cpu")\n'
            "    return model(x.cuda())\n",
            "import torch\n\n\ndef run(model, x, args):\n"
            '    device = torch.device("cuda" if args.cuda else "cpu")\n'
            "    return model(x.to(device))\n",
        ),
        Invalid(  # Lightning knows the process's device: self.device (co-tracker's LightningLite.run)
            "import torch\nfrom pytorch_lightning.lite import LightningLite\n\n\nclass Lite(LightningLite):\n"
            "    def run(self, args):\n        model = build(args)\n        model.cuda()\n        return model\n",
            "import torch\nfrom pytorch_lightning.lite import LightningLite\n\n\nclass Lite(LightningLite):\n"
            "    def run(self, args):\n        model = build(args)\n        model.to(self.device)\n        return model\n",
        ),
        Invalid(
            "class Sampler:\n    def cuda(self):\n        return self\n\nsampler = Sampler()\nsampler.cuda()\n",
            "class Sampler:\n    def cuda(self):\n        return self\n\nsampler = Sampler()\nsampler.cuda()\n",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "cuda"):
            return
        if self.analysis.qualified_name(func) is not None:  # torch.cuda itself, not a method
            return
        ancestors = self.context.ancestors
        if in_cuda_only_test(self.analysis.module, ancestors) or self.analysis.in_cuda_only_code(ancestors):
            return
        kept = [arg for arg in node.args if arg.keyword is not None and arg.keyword.value != "device"]
        drops_index = len(kept) != len(node.args)
        if any(arg.star for arg in node.args):
            self.report(node)
            return
        if (
            under_device_check(self.analysis.module, ancestors)
            or in_code_named_for_cuda(ancestors)
            or self.analysis.beside_cuda_only_code(ancestors)
            or in_gpu_labelled_section(ancestors)
        ):
            # taken only with CUDA (a guard, a `ToGPU` class): `.to(device)` changes nothing
            self.report(node, self.guarded_message)
            return
        if any(owner.cuda_without_to for owner in self.analysis.classes_of(func.value)):
            # the class (one the name may hold) moves its tensors by hand: `.to()` does not do that
            self.report(node)
            return
        named = self._named_device(node)
        if named is not None:
            replacement = node.with_changes(
                func=func.with_changes(attr=cst.Name("to")),
                args=without_trailing_comma([argument(named), *kept]),
            )
            self.report(node, fix=Fix(Safety.SAFE, ((node, replacement),)))
            return
        if not positional_arguments(node) and self._made_where_its_model_is(func.value):
            # ``torch.ones_like(outputs).cuda()``: already on ``outputs``' device, the move goes
            self.report(node, fix=Fix(Safety.SAFE, ((node, func.value),)))
            return
        moving = func.value.value if isinstance(func.value, cst.Name) else None
        device = self._sized_from_an_argument(func.value) or self.context.device_for(
            operands=self.context.operand_partners(node), moving=moving
        )
        if (
            device.inserts_binding
            and not positional_arguments(node)
            and self.context.enclosing_functions()
            and self._stateless_loss(func.value)
        ):
            # ``nn.MSELoss().cuda()`` in a function: nothing to move; no module device line for it
            self.report(node, fix=Fix(Safety.SAFE, ((node, func.value),)))
            return
        replacement = node.with_changes(
            func=func.with_changes(attr=cst.Name("to")),
            args=without_trailing_comma([argument(expression(device.expression)), *kept]),
        )
        safety = Safety.UNSAFE if drops_index or positional_arguments(node) else Safety.SAFE
        self.report(node, fix=self.device_fix([(node, replacement)], device, safety))

    def _stateless_loss(self, receiver: cst.BaseExpression) -> bool:
        """``nn.MSELoss(reduction="mean")``: a loss of ``torch.nn`` made without a tensor (no
        positional argument, no ``weight=``/``pos_weight=``) holds no parameters or buffers, and
        its ``.cuda()`` moves nothing."""
        if not isinstance(receiver, cst.Call):
            return False
        qualified = self.analysis.qualified_name(receiver.func) or ""
        return (
            torch_api.is_torch_nn_module_class(qualified)
            and qualified.endswith("Loss")
            and all(arg.keyword is not None and arg.keyword.value not in ("weight", "pos_weight") for arg in receiver.args)
        )

    def _made_where_its_model_is(self, receiver: cst.BaseExpression) -> bool:
        """``torch.ones_like(outputs)``, ``x.new_zeros(n)`` (through methods that keep the device,
        ``.float()``): a tensor made on the device of the tensor it copies, without ``device=``."""
        while (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and keeps_device(receiver.func.attr.value)
            and receiver.func.attr.value not in torch_api.CONVERSION_METHODS
        ):
            receiver = receiver.func.value
        if not isinstance(receiver, cst.Call) or keyword_argument(receiver, "device") is not None:
            return False
        if isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value in torch_api.SAME_DEVICE_CONSTRUCTOR_METHODS:
            return self.analysis.qualified_name(receiver.func) is None
        qualified = self.analysis.qualified_name(receiver.func) or ""
        return qualified.startswith("torch.") and qualified.endswith("_like") and bool(positional_arguments(receiver))

    def _sized_from_an_argument(self, receiver: cst.BaseExpression) -> Optional[DeviceChoice]:
        """``t.zeros(gt_loc.shape).cuda()`` in ``def loss(pred_loc, gt_loc)`` belongs with
        ``gt_loc``, as TDL002 places ``torch.zeros(gt_loc.shape, device="cuda")``: a torch factory
        computed with a tensor argument (directly or through a name computed only from it)."""
        functions = self.context.enclosing_functions()
        if not (
            functions
            and isinstance(receiver, cst.Call)
            and self.analysis.qualified_name(receiver.func) in torch_api.FACTORIES
        ):
            return None
        function = functions[0]
        tensor = self.analysis.binder.tensor_parameter_in(function, receiver) or self.analysis.tensor_argument_behind(
            function, receiver
        )
        return DeviceChoice(f"{tensor}.device") if tensor is not None else None

    def _named_device(self, node: cst.Call) -> Optional[cst.BaseExpression]:
        """The device the call names, to keep: ``.cuda(w.device)`` and ``.cuda(device)`` as they
        are, ``.cuda(t.get_device())`` as ``t.device`` (an index there, a device for ``.to``)."""
        device_args = [arg for arg in node.args if arg.keyword is None or arg.keyword.value == "device"]
        if len(device_args) != 1:
            return None
        value = device_args[0].value
        if isinstance(value, cst.Attribute) and value.attr.value == "device":
            return value
        if (
            isinstance(value, cst.Call)
            and not value.args
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "get_device"
        ):
            return cst.Attribute(value=value.func.value, attr=cst.Name("device"))
        if isinstance(value, cst.Name) and self.analysis.value_of(value).kind is Kind.DEVICE:
            if not self.analysis.value_of(value).defaults_to_cpu:
                return value
        return None
