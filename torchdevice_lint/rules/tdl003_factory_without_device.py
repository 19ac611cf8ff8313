from __future__ import annotations

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.contract import cpu_chosen
from torchdevice_lint.analysis.tree import walk
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import factory_on_device


class FactoryWithoutDevice(Rule):
    """
    ## What it does
    Flags a tensor factory (`torch.zeros`, `torch.arange`, `torch.tensor`, `torch.randn`, ...)
    called without `device=` whose result meets a tensor that lives on the device: an input of
    `forward`, a parameter, buffer or submodule, a tensor moved with `.to(device)` or
    `.cuda()`, the output of a model that was moved, or what a library function (or a module
    of another file) computes from tensors on the device. A comparison that refuses two
    devices is a meeting too: `torch.allclose`, `torch.equal`, `torch.testing.assert_close`
    and test suites' `assert_close` wrappers, and so is a call of a function of another file of
    the project that never moves the tensors it is given there (kornia's
    `draw_convex_polygon(image, points, color)`). Tensors that come in from the caller
    (the arguments of a function, what is computed from them) live on the caller's device (an
    argument is a tensor when the code uses it as one, or its annotation or docstring says so:
    `offset (torch.Tensor): ...`); so
    does a name that holds a CPU factory on one path and such a tensor on another, passed to a
    helper. A factory a module's `forward` fills with values computed from its input and returns
    goes back to a caller whose input is on the device. A tensor kept on `self` (`self.total = torch.zeros(n)` in `reset`) is flagged when
    another method of the class meets the caller's tensors with it (`update(preds)`).

    ## Why is this bad?
    Factories create tensors on the CPU. The code works on a CPU-only machine and fails on a
    GPU with `Expected all tensors to be on the same device, but found at least two devices,
    cuda:0 and cpu!`: the classic positional index or attention mask built inside `forward`,
    or a batch created next to a model that was moved.

    Not flagged, because PyTorch accepts them or they follow their source: `*_like(x)`,
    `x.new_*()`, factories moved before use (`torch.ones(3).to(device)`) or placed on the CPU
    on purpose (`torch.zeros(n).cpu()` in the branch without CUDA), 0-dim scalars
    (`torch.tensor(2.0)`), CPU index tensors used to index a device tensor (next to a device
    index too: `x[rows, cols]`; a device index into a CPU factory is flagged), the source of
    `dst.copy_(src)` (which copies across devices), and code that never places anything on a device. Nor is code that shows it runs on the CPU: data loading
    (`__getitem__`, collate functions, the methods of a Dataset or a collator, a function given
    as `collate_fn=` and the helpers only it calls), a function asserting a CPU tensor type
    (`assert isinstance(edge_index, torch.LongTensor)`), the CPU branch of a device test (the
    `else` of `if x.is_cuda:` or of `if torch.cuda.is_available():`, the body of `if not ...:`),
    tensors from a helper of the file that places what it returns with a `device="cpu"` (or
    `None`) parameter the call leaves out (`uniform_sample(n, low, high)`), a helper whose
    callers move what it returns to the device at once (`labels = self.mask_tokens(inputs)`
    then `labels = labels.to(device)`; `dcf.hann2d(sz).to(device)` in another file of the
    project), a function another file calls in data loading (`masks_to_boxes(masks)` in a
    Dataset's `__getitem__`, `draw_masks(image, mask)` in its `plot`),
    tests that put nothing on a device themselves, and the helpers only tests use.

    ## Example
    ```python
    def forward(self, x):
        positions = torch.arange(x.size(1))
        return x + self.position_embedding(positions)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        positions = torch.arange(x.size(1), device=x.device)
        return x + self.position_embedding(positions)
    ```

    ## Fix safety
    Adds `device=` with the device of a tensor in scope (`x.device`) or the bound device
    variable; `torch.from_numpy(a)` becomes `torch.from_numpy(a).to(device)`. Safe for
    deterministic factories. Unsafe for random ones (`rand`, `randn`, `randint`, `randperm`):
    the CUDA generator draws other numbers than the CPU one for the same seed. Unsafe when the
    fix must invent a module-level device inside an `nn.Module`, whose own device may differ.
    """

    code = "TDL003"
    name = "factory-without-device"
    message = "`{factory}()` creates a CPU tensor that meets device tensors; pass `device={device}`"
    caller_message = (
        "`{factory}()` creates a CPU tensor that meets `{partner}`, which lives on the caller's device;"
        " pass `device={source}.device`"
    )
    kept_state_message = (
        "`{factory}()` creates a CPU tensor, kept on `self`, that meets `{partner}` in `{method}()`,"
        " which lives on the caller's device; create it on that device"
    )
    needles = ("torch",)

    valid = (
        # a parameter rebound to a legacy constructor of itself (or torch.from_numpy of it) is a CPU
        # tensor from there on (a-PyTorch-Tutorial-to-Object-Detection's expand(image, boxes, filler))
        "import torch\n\n\ndef expand(image, filler):\n    filler = torch.FloatTensor(filler)\n"
        "    canvas = torch.ones((3, image.size(1), image.size(2))) * filler.unsqueeze(1).unsqueeze(1)\n    return canvas\n",
        "import torch\n\n\ndef expand(image, filler):\n    filler = torch.from_numpy(filler)\n"
        "    canvas = torch.ones((3, image.size(1), image.size(2))) * filler.unsqueeze(1).unsqueeze(1)\n    return canvas\n",
        # computed from an argument through .cpu(): on the CPU whatever the caller's device (pytracking's ToMP)
        "import torch\n\n\ndef regress(bbox_preds, scale, n):\n    xs = torch.arange(0, n, step=16, dtype=torch.float32)\n"
        "    ltrb = bbox_preds.permute(0, 2, 1)[0].cpu() * scale\n    return xs - ltrb[:, 0]\n",
        # the CPU half of an availability test: the code chose the CPU there (pytorch-retinanet's focal loss)
        "import torch\nfrom torch import nn\n\n\nclass FocalLoss(nn.Module):\n    def forward(self, classifications, alpha):\n"
        "        classification = classifications[0, :, :]\n        if torch.cuda.is_available():\n"
        "            factor = torch.ones(classification.shape).cuda() * alpha\n        else:\n"
        "            factor = torch.ones(classification.shape) * alpha\n        return factor * classification\n",
        "import torch\nfrom torch import nn\n\n\nclass Pad(nn.Module):\n    def forward(self, x):\n"
        "        if not torch.cuda.is_available():\n            return torch.cat([x, torch.zeros(x.shape)])\n        return x\n",
        # documented as a number: a number may meet the CPU tensor
        "import torch\n\n\ndef after(offset, n):\n    \"\"\"Positions after an offset.\n\n    Args:\n"
        "        offset (int): where the rows start.\n        n (int): how many positions.\n    \"\"\"\n"
        "    return torch.arange(n) >= offset\n",
        # the CPU branch of an is_cuda test (the CUDA one spells its device)
        "import torch\n\n\ndef face_mask(pose):\n    b, t, h, w = pose.size()\n    part = (pose / 2 + 0.5) * 24\n"
        "    if pose.is_cuda:\n        mask = torch.empty(b, t, h, w, dtype=torch.uint8, device=pose.device).fill_(0)\n"
        "    else:\n        mask = torch.empty(b, t, h, w, dtype=torch.uint8).fill_(0)\n    return mask | (part > 1).byte()\n",
        "import torch\n\n\ndef face_mask(pose):\n    b, t, h, w = pose.size()\n    part = (pose / 2 + 0.5) * 24\n"
        "    if not pose.is_cuda:\n        mask = torch.empty(b, t, h, w, dtype=torch.uint8).fill_(0)\n"
        "    else:\n        mask = torch.empty(b, t, h, w, dtype=torch.uint8, device=pose.device).fill_(0)\n"
        "    return mask | (part > 1).byte()\n",
        "import torch\nfrom torch import nn\n\nclass Vocoder(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.rnn = nn.GRU(8, 8)\n\n    def forward(self, x):\n"
        "        if torch.cuda.is_available():\n            h = torch.zeros(1, x.size(0), 8).cuda()\n"
        "        else:\n            h = torch.zeros(1, x.size(0), 8).cpu()\n        return self.rnn(x, h)\n",
        "import torch\nx = torch.zeros(3)\ny = x + torch.ones(3)\n",
        "import torch\nfrom torch import nn\n\nclass Tok(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(3, 8, 3)\n\n"
        "    def sequence_length(self):\n        return self.forward(torch.zeros(1, 3, 8, 8)).shape[1]\n\n"
        "    def forward(self, x):\n        return self.conv(x.to(self.conv.weight.device))\n",
        "import torch\n\ndef forward(x):\n    return x + torch.zeros_like(x)\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x * torch.ones(3).to(device)\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x * torch.tensor(2.0)\n",
        "import torch\nx = torch.randn(5, 3).to(device)\nrows = x[torch.arange(2)]\n",
        "import torch\nx = torch.randn(3).to(device)\ny = x + x.new_zeros(3)\n",
        "import torch\nx = torch.randn(3, device=device)\ny = x + torch.ones(3, device=device)\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n"
        "    def forward(self, x, scale):\n        return torch.arange(4) * scale\n",
        "import torch\n\nclass Pairs(torch.utils.data.Dataset):\n"
        "    def __getitem__(self, index: torch.Tensor):\n        return index.view(1) + torch.arange(2)\n",
        "import numpy as np\nimport torch\n\ndef histogram(values: torch.Tensor, device=None):\n"
        "    counts = torch.zeros(10)\n    counts += values.view(-1)[:10]\n    return np.asarray(values)\n",
        "import torch\n\ndef grid(x: torch.Tensor, device=None):\n    if not torch.cuda.is_available():\n"
        "        return x.view(-1) + torch.arange(x.numel())\n    return x\n",
        "import torch\n\ndef best(scores: torch.Tensor, n: int):\n    counts = torch.zeros(n)\n"
        "    return torch.max(scores, 1), torch.max(counts, 0)\n",
        # the type name of a tensor holds its device ("torch.cuda.FloatTensor"): a move, as type_as
        "import torch\n\ndef pad(output: torch.Tensor, n: int):\n"
        "    zeros = torch.zeros(n, output.size(1)).type(output.data.type())\n    return torch.cat([output, zeros])\n",
        # a ``device="cpu"`` default left out by the caller places on the CPU (stylegan2's augmentation)
        "import torch\n\ndef normal_sample(size, std=1, device='cpu'):\n"
        "    return torch.empty(size, device=device).normal_(0, std)\n\ndef sample_color(size):\n"
        "    eye = torch.eye(4).unsqueeze(0).repeat(size, 1, 1)\n"
        "    return normal_sample(size, std=0.2).view(-1, 1, 1) * eye\n",
        # ... also given by the caller (YOLOX's head: ``dtype=xin[0].type()``)
        "import torch\nfrom torch import nn\n\nclass Head(nn.Module):\n    def forward(self, xin):\n"
        "        return self.decode(xin[0] * 2, dtype=xin[0].type())\n\n    def decode(self, outputs, dtype):\n"
        "        strides = torch.full((1, 4, 1), 8).type(dtype)\n        return outputs * strides\n",
        # kept on self, then wrapped as the module's parameter: it moves with the module
        "import torch\nfrom torch import nn\nfrom heads import BaseHead\n\nclass Head(BaseHead):\n"
        "    def __init__(self, w: int):\n        super().__init__()\n"
        "        self.grid = torch.arange(0.0, 1.0 * w, 1).reshape(1, 1, 1, w) / w\n"
        "        self.grid = nn.Parameter(self.grid, requires_grad=False)\n\n"
        "    def expectation(self, heatmaps: torch.Tensor):\n        return (heatmaps * self.grid).sum(-1)\n",
        # kept on self on the CPU; every caller of the method that meets it moves it there first
        "import torch\n\nclass Scheduler:\n    def __init__(self, n: int):\n"
        "        self.betas = torch.linspace(0.1, 0.2, n)\n        self.alphas = torch.cumprod(1.0 - self.betas, dim=0)\n\n"
        "    def _variance(self, t: torch.Tensor):\n        return 1 - self.alphas[t]\n\n"
        "    def step(self, output: torch.Tensor, t: torch.Tensor):\n"
        "        self.alphas = self.alphas.to(output.device)\n        return output * self._variance(t)\n",
        # a dummy input given to forward's helper while the module is built (its layers on the CPU)
        "import torch\nfrom torch import nn\n\nclass Blocks(nn.Module):\n    def __init__(self, n: int):\n"
        "        super().__init__()\n        self.n = n\n        self.proj = nn.Linear(n, n)\n\n"
        "    def output_shape(self):\n        return self._combine(torch.zeros(1, self.n)).shape\n\n"
        "    def forward(self, x):\n        return self._combine(x)\n\n"
        "    def _combine(self, x):\n        return x + self.proj(x)\n",
        # an uninitialised placeholder handed to an extension kernel, which ignores it
        "import torch\nfrom torch import nn\nfrom kernels import softmax_context\n\nclass Attention(nn.Module):\n"
        "    def __init__(self, n: int):\n        super().__init__()\n        self.weight = nn.Parameter(torch.randn(n, n))\n\n"
        "    def forward(self, x: torch.Tensor, mask=None):\n        no_masking = mask is None\n        if no_masking:\n"
        "            mask = torch.empty(1)\n        qkv = x @ self.weight\n"
        "        return softmax_context(qkv, mask, no_masking) + softmax_context(qkv, torch.empty(1), True)\n",
        # kept on self, met in a private method that the class only gives its own state
        'import torch\n\n\nclass Sampler:\n    def __init__(self, n: int):\n        self.groups = {0: torch.arange(n)}\n        self.recency = torch.zeros(n, dtype=torch.long)\n\n    def _select(self, positions: torch.Tensor, k: int):\n        return positions[self.recency[positions].argsort()[:k]]\n\n    def sample(self, k: int):\n        return [self._select(self.groups[key], k) for key in self.groups]\n',
        # given to a module whose forward only turns it into Python values: it meets no tensor
        "import torch\nfrom torch import nn\n\n\nclass Gather(nn.Module):\n    def forward(self, feats, index):\n"
        "        return feats[:, index.tolist()]\n\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.ones(2, 3, device=device)\ny = Gather()(x, torch.arange(3))\n",
        # nor one whose forward returns it as given
        "import torch\nfrom torch import nn\n\n\nclass Reference(nn.Module):\n    def forward(self, feats, labels):\n"
        "        return labels\n\n\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.ones(2, 3, device=device)\ny = Reference()(x, torch.randint(0, 5, (2,)))\n",
    )
    invalid = (
        # a parameter typed as a tensor by its docstring only
        Invalid(  # a parameter given a dtype by its default is a dtype: the factory stays on the CPU
            "import torch\nfrom torch import nn\n\nclass Scale(nn.Module):\n"
            "    def forward(self, x, dtype=torch.float32):\n        return x * torch.full((4, 1), 8).type(dtype)\n"
        ),
        Invalid(
            "import torch\n\n\ndef after(offset, n):\n    \"\"\"Positions after an offset.\n\n    Args:\n"
            "        offset (torch.Tensor): where each row starts.\n        n (int): how many positions.\n    \"\"\"\n"
            "    return torch.arange(n) >= offset\n",
            "import torch\n\n\ndef after(offset, n):\n    \"\"\"Positions after an offset.\n\n    Args:\n"
            "        offset (torch.Tensor): where each row starts.\n        n (int): how many positions.\n    \"\"\"\n"
            "    return torch.arange(n, device=offset.device) >= offset\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Cell(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.lstm = nn.LSTMCell(1, 4)\n\n"
            "    def forward(self, x):\n        h = torch.zeros(x.size(0), 4)\n        return self.lstm(x, (h, h))\n",
            "import torch\nfrom torch import nn\n\nclass Cell(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.lstm = nn.LSTMCell(1, 4)\n\n"
            "    def forward(self, x):\n        h = torch.zeros(x.size(0), 4, device=x.device)\n        return self.lstm(x, (h, h))\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Positions(nn.Module):\n"
            "    def forward(self, x, seq_len):\n        return x + torch.arange(seq_len)\n",
            "import torch\nfrom torch import nn\n\nclass Positions(nn.Module):\n"
            "    def forward(self, x, seq_len):\n        return x + torch.arange(seq_len, device=x.device)\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Causal(nn.Module):\n"
            "    def forward(self, x):\n        n = x.shape[1]\n        mask = torch.ones(n, n).triu(1)\n"
            "        return x.masked_fill(mask.bool(), 0.0)\n",
            "import torch\nfrom torch import nn\n\nclass Causal(nn.Module):\n"
            "    def forward(self, x):\n        n = x.shape[1]\n        mask = torch.ones(n, n, device=x.device).triu(1)\n"
            "        return x.masked_fill(mask.bool(), 0.0)\n",
        ),
        Invalid(
            "import torch\n\ndef subgraph_index(subset: torch.Tensor, edge_index: torch.Tensor, n: int):\n"
            "    index = torch.zeros(n, dtype=torch.long, device=edge_index.device)\n"
            "    offsets = torch.arange(subset.size(0))\n    return index[edge_index] + offsets[subset]\n",
            "import torch\n\ndef subgraph_index(subset: torch.Tensor, edge_index: torch.Tensor, n: int):\n"
            "    index = torch.zeros(n, dtype=torch.long, device=edge_index.device)\n"
            "    offsets = torch.arange(subset.size(0), device=subset.device)\n"
            "    return index[edge_index] + offsets[subset]\n",
        ),
        Invalid(
            "import torch\n\ndef pairs(labels: torch.Tensor, device=None):\n"
            "    eye = torch.eye(labels.size(0), dtype=torch.bool)\n"
            "    same = labels.unsqueeze(0) == labels.unsqueeze(1)\n    return same & ~eye\n",
            "import torch\n\ndef pairs(labels: torch.Tensor, device=None):\n"
            "    eye = torch.eye(labels.size(0), dtype=torch.bool, device=labels.device)\n"
            "    same = labels.unsqueeze(0) == labels.unsqueeze(1)\n    return same & ~eye\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass PositionalEncoding(nn.Module):\n"
            "    def __init__(self, n):\n        super().__init__()\n        self.embedding = nn.Embedding(n, 8)\n\n"
            "    def forward(self, x):\n        positions = torch.arange(x.size(1))\n"
            "        return x + self.embedding(positions)\n\n"
            "    def empty_state(self, x):\n        return torch.zeros(8, device=x.device)\n",
            "import torch\nfrom torch import nn\n\nclass PositionalEncoding(nn.Module):\n"
            "    def __init__(self, n):\n        super().__init__()\n        self.embedding = nn.Embedding(n, 8)\n\n"
            "    def forward(self, x):\n        positions = torch.arange(x.size(1), device=x.device)\n"
            "        return x + self.embedding(positions)\n\n"
            "    def empty_state(self, x):\n        return torch.zeros(8, device=x.device)\n",
        ),
        Invalid(
            "import torch\n\ndef step(model: torch.nn.Module, device):\n    model.to(device)\n"
            "    return model(torch.zeros(4, 10))\n",
            "import torch\n\ndef step(model: torch.nn.Module, device):\n    model.to(device)\n"
            "    return model(torch.zeros(4, 10, device=device))\n",
        ),
        Invalid(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "logits = net(x).to(device)\nlabels = torch.tensor([1, 0, 1])\nloss = torch.nn.functional.cross_entropy(logits, labels)\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "logits = net(x).to(device)\nlabels = torch.tensor([1, 0, 1], device=device)\n"
            "loss = torch.nn.functional.cross_entropy(logits, labels)\n",
        ),
        Invalid(
            "import torch\n\ndef attend(scores: torch.Tensor, device):\n    scores = scores.to(device)\n"
            "    n = scores.size(-1)\n    mask = torch.triu(torch.ones(n, n), diagonal=1)\n"
            "    return scores.masked_fill(mask.bool(), float('-inf'))\n",
            "import torch\n\ndef attend(scores: torch.Tensor, device):\n    scores = scores.to(device)\n"
            "    n = scores.size(-1)\n    mask = torch.triu(torch.ones(n, n, device=device), diagonal=1)\n"
            "    return scores.masked_fill(mask.bool(), float('-inf'))\n",
        ),
        Invalid(
            "import torch\nx = torch.randn(3).cuda()\ny = x + torch.randn(3)\n",
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Kernel(nn.Module):\n    def forward(self, x):\n"
            "        k = torch.zeros(x.size(0), x.size(0))\n        k[:, :] = x @ x.t()\n        return k\n",
            "import torch\nfrom torch import nn\n\nclass Kernel(nn.Module):\n    def forward(self, x):\n"
            "        k = torch.zeros(x.size(0), x.size(0), device=x.device)\n        k[:, :] = x @ x.t()\n        return k\n",
        ),
        Invalid(
            "import torch\n\ndef floor_at_zero(scores: torch.Tensor):\n    zero = torch.zeros(1)\n"
            "    return torch.max(zero, scores)\n",
            "import torch\n\ndef floor_at_zero(scores: torch.Tensor):\n    zero = torch.zeros(1, device=scores.device)\n"
            "    return torch.max(zero, scores)\n",
        ),
        Invalid(
            'import torch\n\n\nclass Sampler:\n    def __init__(self, n: int):\n        self.groups = {0: torch.arange(n)}\n        self.recency = torch.zeros(n, dtype=torch.long)\n\n    def _select(self, positions: torch.Tensor, k: int):\n        return positions[self.recency[positions].argsort()[:k]]\n\n    def sample(self, picked: torch.Tensor, k: int):\n        return self._select(picked, k)\n',
        ),
        Invalid(  # the CUDA branch of an is_cuda test is not the CPU's
            "import torch\n\n\ndef face_mask(pose):\n    b, t, h, w = pose.size()\n    part = (pose / 2 + 0.5) * 24\n"
            "    if pose.is_cuda:\n        mask = torch.empty(b, t, h, w, dtype=torch.uint8).fill_(0)\n"
            "    else:\n        mask = torch.empty(b, t, h, w, dtype=torch.uint8).fill_(0)\n    return mask | (part > 1).byte()\n",
        ),
        Invalid(
            "import torch\n\nclass Counts:\n    def __init__(self, n: int):\n        self.counts = torch.zeros(n)\n\n"
            "    def update(self, labels: torch.Tensor):\n        self.counts += torch.bincount(labels, minlength=len(self.counts))\n",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.analysis.meeting_for_origin(node) is None and not self.analysis.unplaced_meetings_for_origin(node):
            return  # meets nothing (most calls): the checks below would only say so later
        if self.analysis.qualified_name(node.func) in torch_api.LEGACY_TENSOR_TYPES:
            return  # TDL006's, which places its replacement as this rule would
        if self._uninitialised_placeholder(node) or cpu_chosen(self.context.ancestors, self.analysis.flow.values):
            return
        meeting = self.analysis.meeting_for_origin(node)
        if meeting is None:
            self._report_caller_device_meeting(node)
            return
        factory = self.analysis.qualified_name(node.func) or "torch.tensor"
        device = self.context.device_for(meeting.partner)
        replacement = factory_on_device(node, factory, device.expression)
        in_module = any(
            scope.owner_class is not None and scope.owner_class.is_module
            for scope in self.analysis.scopes_of(self.context.enclosing_functions())
        )
        risky = factory in torch_api.RANDOM_FACTORIES or (device.inserts_binding and in_module)
        # A device the fix binds at module level does not exist yet: nothing to name.
        message = self.message.format(factory=factory, device="" if device.inserts_binding else device.expression)
        self.report(node, message, self.device_fix([(node, replacement)], device, Safety.UNSAFE if risky else Safety.SAFE))

    def _uninitialised_placeholder(self, node: cst.Call) -> bool:
        """``torch.empty(1)`` (or ``(0)``) handed to a call that is not torch's (an extension
        kernel), directly or through a name nothing fills in place: its values are never
        initialised, so no computation reads them; the kernel ignores the placeholder."""
        if self.analysis.qualified_name(node.func) != "torch.empty" or len(node.args) != 1:
            return False
        size = node.args[0]
        if size.keyword is not None or not isinstance(size.value, cst.Integer) or size.value.value not in ("0", "1"):
            return False
        parent, call = self.context.parent(), self.context.parent(2)
        if isinstance(parent, cst.Arg) and isinstance(call, cst.Call):
            return not (self.analysis.qualified_name(call.func) or "").startswith("torch.")
        assign = self.context.parent()
        functions = self.context.enclosing_functions()
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and functions):
            return False
        target = assign.targets[0].target
        if not isinstance(target, cst.Name):
            return False
        name, given = target.value, False
        for use in walk(functions[0].body):
            if isinstance(use, cst.Attribute) and isinstance(use.value, cst.Name) and use.value.value == name:
                if use.attr.value not in ("dtype", "shape", "device"):
                    return False  # ``mask.fill_(0)``, ``mask.uniform_()``: filled in place
            elif isinstance(use, (cst.AugAssign, cst.Assign)):
                targets = [use.target] if isinstance(use, cst.AugAssign) else [t.target for t in use.targets]
                if any(isinstance(t, cst.Subscript) and _names(t.value, name) for t in targets):
                    return False  # ``mask[...] = values``
            elif isinstance(use, cst.Arg) and any(_names(part, name) for part in walk(use.value) if isinstance(part, cst.Name)):
                if use.keyword is not None and use.keyword.value == "out":
                    return False
                given = True
            elif isinstance(use, cst.Call) and isinstance(use.func, cst.Name) and use.func.value == name:
                return False
        return given

    def _report_caller_device_meeting(self, node: cst.Call) -> None:
        """The factory meets a tensor the caller passed (or one computed from it)."""
        met = self.analysis.caller_device_meeting(node, self.context.ancestors, self.context.statement())
        if met is None:
            return
        factory = self.analysis.qualified_name(node.func) or "torch.tensor"
        if met.source is None:
            # Kept on ``self`` and met in another method: no tensor of that call is in scope here.
            method = met.method.name.value if met.method is not None else "another method"
            self.report(node, self.kept_state_message.format(factory=factory, partner=met.partner, method=method))
            return
        replacement = factory_on_device(node, factory, f"{met.source}.device")
        message = self.caller_message.format(factory=factory, partner=met.partner, source=met.source)
        # Unsafe: the callers are not seen, and one may rely on the tensor staying on the CPU.
        self.report(node, message, Fix(Safety.UNSAFE, ((node, replacement),)))


def _names(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name
