from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.contract import cpu_chosen
from torchdevice_lint.analysis.devices import names_a_device
from torchdevice_lint.analysis.tree import bound_targets, string_value, walk
from torchdevice_lint.analysis.values import Kind
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import append_argument, argument, expression
from torchdevice_lint.wrapping import UNCONFIGURED_LINE_LENGTH

#: Methods whose result is a size: ``x.size()``, ``x.size(0)``, ``x.numel()``, ``x.dim()``, and
#: ``x.item()``, a Python number, which the constructors take as a size as ``torch.empty`` does.
_SIZE_METHODS = frozenset({"size", "numel", "dim", "item"})


class LegacyConstructor(Rule):
    """
    ## What it does
    Flags the legacy tensor constructors: `torch.FloatTensor(...)`, `torch.LongTensor(...)` and
    the other typed ones, `torch.Tensor(...)`, their `torch.cuda.*Tensor` twins, a name bound
    to one of the CUDA types and then called (`Tensor = torch.cuda.FloatTensor if cuda else
    torch.FloatTensor`), and `torch.set_default_tensor_type(...)`.

    ## Why is this bad?
    The same call means two things: `torch.FloatTensor(2, 3)` is an uninitialised 2×3 tensor,
    `torch.FloatTensor([2, 3])` holds the data `[2., 3.]`. The constructors only make CPU
    tensors (they reject any other `device=`), and the `torch.cuda.*Tensor` ones only exist
    where PyTorch was built with CUDA: on a laptop they raise `TypeError: type
    torch.cuda.FloatTensor not available. Torch not compiled with CUDA enabled.`
    `torch.set_default_tensor_type` is deprecated since PyTorch 2.1.

    ## Example
    ```python
    weights = torch.cuda.FloatTensor([0.2, 0.8])
    hidden = torch.FloatTensor(batch.size(0), 128)
    torch.set_default_tensor_type(torch.cuda.FloatTensor)
    ```

    ## Use instead
    ```python
    weights = torch.tensor([0.2, 0.8], dtype=torch.float32, device=device)
    hidden = torch.empty(batch.size(0), 128, dtype=torch.float32)
    torch.set_default_dtype(torch.float32)
    torch.set_default_device(device)
    ```

    ## Fix safety
    With a list or tuple literal as its only argument the call becomes
    `torch.tensor(data, dtype=...)`; when every argument is a size (an int literal, `x.size(n)`,
    `x.shape[n]`, `x.size()`, `len(x)`, `x.item()`, the `shape` of a known tensor, a name bound
    once to one of those, or any two or more arguments, which the constructor only accepts
    as sizes) it becomes `torch.empty(*sizes, dtype=...)`; no arguments give
    `torch.empty(0, dtype=...)`. A `torch.cuda.*Tensor` also gets `device=`: the device of a tensor
    argument of the function it is computed with (`torch.arange(0, n, out=torch.cuda.LongTensor(n))`
    with `n = lengths.max().item()` in `def mask(lengths)` gets `device=lengths.device`) or of a
    tensor it meets in the same operation (`x + torch.cuda.FloatTensor(n)`), else
    the device in scope (or a new module-level `device`); in code that only runs with CUDA (see
    TDL001) `device="cuda"`, as written; CPU types stay on the CPU, except where the new factory
    would meet a tensor of the caller's (TDL003): there it gets that tensor's device
    (`torch.cat((torch.FloatTensor(N, 1).fill_(1), X), 1)` in `def f(X)` gets `device=X.device`),
    unsafe as TDL003's fix, so that the fix's output is not reported again. A
    placeholder without data given as `out=` to a factory that has no `dtype=` yet says only the
    result's dtype and device (`out=` resizes it): the factory gets those instead
    (`torch.arange(n, out=torch.LongTensor())` becomes `torch.arange(n, dtype=torch.int64)`). `torch.Tensor` keeps the
    default dtype: number literals are written as floats (`torch.Tensor([1, 0])` becomes
    `torch.tensor([1.0, 0.0])`, up to 16 whole numbers), other data get
    `dtype=torch.get_default_dtype()`; whole numbers cast at once stay as written
    (`torch.Tensor([10, 5]).to(device).long()` becomes `torch.tensor([10, 5], device=device).long()`,
    also before `.to(torch.float32)`). A constructor moved at once to a device held by a name or
    attribute takes it as `device=` (`torch.FloatTensor([0, 1, 0]).to(self.device)` becomes
    `torch.tensor([0, 1, 0], dtype=torch.float32, device=self.device)`): the same tensor, made
    where it is used. Sizes filled at once with zeros or ones (`torch.LongTensor(b, n).fill_(0)`,
    `.zero_()`, `.fill_(1)`) become `torch.zeros`/`torch.ones` with those sizes, and a move
    right after goes into them as above: `torch.zeros(b, n, dtype=torch.int64, device=device)`. `torch.LongTensor` of whole-number literals needs no
    `dtype=`: `torch.tensor` infers int64 from them (`torch.LongTensor([1])` becomes
    `torch.tensor([1])`; `[]` keeps it). Any
    other argument (a name, which may be data or a size, unless it is a parameter annotated
    `int` or defaulting to a whole number, or bound once to a size; `list(...)`, `tuple(...)`,
    a slice of them and torch's `_pair(...)`-style helpers, or a name bound once to one, are
    data) is reported without a fix, as is an
    alias, and so is every other constructor of its expression (chained on it, its partner in an
    operation, an argument of its call: `torch.FloatTensor(anchors).view(n, 2).index_select(1,
    torch.LongTensor([0]))`), which half converted would say one thing two ways; the elements of
    a list, tuple, set or dict literal are expressions of their own. All of these are safe. `torch.set_default_tensor_type(T)` as a statement becomes
    `torch.set_default_dtype(...)`, safe for a CPU type; for a CUDA type a second line
    `torch.set_default_device(device)` follows, which is unsafe: the default device applies to
    factories such as `torch.zeros` but not to legacy constructors, which the old call did move
    to the GPU.
    """

    code = "TDL006"
    name = "legacy-constructor"
    message = "`{name}` is a legacy constructor; use `torch.tensor(data, ...)` or `torch.empty(*sizes, ...)`"
    default_type_message = (
        "`torch.set_default_tensor_type()` is deprecated; use `torch.set_default_dtype()` and `torch.set_default_device()`"
    )
    alias_message = "`{alias}` aliases the legacy constructor `{name}`; use `torch.tensor` / `torch.empty` with `device=`"
    needles = ("Tensor",)

    valid = (
        # a chained expression converted whole, each constructor as its data says
        "import torch\n\n\ndef f(anchors, n):\n"
        "    return torch.tensor(anchors).view(n, 2).index_select(1, torch.tensor([0]))\n",
        "import torch\n\n\ndef f(x, out_size):\n"
        "    return torch.tensor(list(x.size()[2:])) / torch.tensor(out_size, dtype=torch.get_default_dtype())\n",
        "import torch\n\n\ndef column(n: int):\n    return torch.ones(n, 1, dtype=torch.float32)\n",
        "import torch\n\n\ndef with_ones(X):\n    N = X.size(0)\n"
        "    O = torch.ones(N, 1, dtype=torch.float32, device=X.device)\n    return torch.cat((O, X), 1)\n",
        # noise made where a rebound tensor parameter lives
        "import torch\n\n\ndef noise(spect):\n    spect = spect.contiguous()\n"
        "    return torch.empty(spect.size(0), 8, device=spect.device).normal_()\n",
        # noise beside a parameter rebound to a loaded tensor: on the run's device
        'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
        "def noise(spect, path):\n    spect = torch.load(path)\n"
        "    return torch.empty(spect.size(0), 8, dtype=torch.float32, device=device).normal_()\n",
        # a buffer filled at once, as the fix writes it
        "import torch\n\n\ndef buffers(batch_size, n, device):\n"
        "    return torch.zeros(batch_size, n + 1, dtype=torch.int64, device=device)\n",
        # a constructor moved at once, as the fix writes it
        "import torch\n\n\nclass Views:\n    def pose(self):\n"
        "        return torch.tensor([self.radius], dtype=torch.float32, device=self.device)\n",
        "import torch\n\n\ndef f(device):\n    return torch.tensor([1.5], dtype=torch.float32).to(device, non_blocking=True)\n",
        "import torch\nx = torch.tensor([1.0, 2.0], device=device)\n",
        "import torch\n\ndef noise(out_features: int):\n    return torch.empty(out_features, dtype=torch.float32)\n",
        "import torch\n\ndef gather(data, max_size=4096):\n    return torch.empty(max_size, dtype=torch.uint8, device=device)\n",
        "import torch\n\nchunk = torch.tensor(list(enc), dtype=torch.uint8)\n",
        "import torch\nx = torch.empty(2, 3, dtype=torch.float32)\n",
        "import torch\n\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return x\n",
        "import torch\nok = isinstance(x, torch.Tensor) and x.type() == 'torch.cuda.FloatTensor'\n",
        "import torch\ny = torch.Tensor.add(x, 1)\n",
        "import torch\n\nclass Masked(torch.Tensor):\n    pass\n",
        "from tensorflow import Tensor\nx = Tensor([1, 2])\n",
        "import torch\ntorch.set_default_dtype(torch.float64)\n",
        "import torch\nFloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\nprint(FloatTensor)\n",
        "import torch\n\ndef get_mask(lengths):\n    max_len = torch.max(lengths).item()\n"
        "    return torch.arange(0, max_len, out=torch.empty(max_len, dtype=torch.int64, device=lengths.device))\n",
        "import torch\nmask = torch.ones(matrix.shape, dtype=torch.int32, device=device)\n",
        "import torch\nids = torch.tensor(token_ids, dtype=torch.int64)\n",
        "import torch\nlabels = torch.tensor([1, 0, 1])\n",
        "import torch\nbuffer = lengths.new_empty(n)\n",
        "import torch\nids = torch.tensor([10, 5, 2]).long()\n",
        "import torch as th\ncondition = th.empty(1)\n",
        "import torch\nexpected = torch.tensor([[0, 1], [4, 5]]).to(torch.float32)\n",
        "import torch\n\ndef ids_like(lengths):\n    return torch.arange(lengths.numel(), device=lengths.device)\n",
        "import torch\nindex = torch.arange(0, n ** 3, 1, dtype=torch.int64)\n",
        "import torch\nimport triton\n\nbuffer = torch.empty(0, dtype=torch.uint8, device='cuda')\n",
        "import torch\ngrid = torch.linspace(0, 1, steps, dtype=torch.get_default_dtype())\n",
        "import torch\nfrom torch.nn.modules.utils import _pair\n\nk = torch.tensor(_pair(3), dtype=torch.get_default_dtype())\n",
    )
    invalid = (
        Invalid(  # a parameter defaulting to a whole number is a size; list(...) is data (OpenNMT's all_gather_list)
            "import pickle\n\nimport torch\n\n\ndef gather(data, max_size=4096):\n"
            "    buffer = torch.cuda.ByteTensor(max_size)\n    enc = pickle.dumps(data)\n"
            "    buffer[:len(enc)] = torch.ByteTensor(list(enc))\n    return buffer\n",
            "import pickle\n\nimport torch\n\ndevice = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")\n\n\n"
            "def gather(data, max_size=4096):\n"
            "    buffer = torch.empty(max_size, dtype=torch.uint8, device=device)\n    enc = pickle.dumps(data)\n"
            "    buffer[:len(enc)] = torch.tensor(list(enc), dtype=torch.uint8)\n    return buffer\n",
            count=2,
        ),
        Invalid(  # a slice of a list and a name bound to _pair(...) are data (torchreid's and HRNet's FLOP hooks)
            "import torch\nfrom torch.nn.modules.utils import _pair\n\n\ndef hook(m, x, y):\n"
            "    out_size = _pair(m.output_size)\n    k = torch.Tensor(list(x.size()[2:])) / torch.Tensor(out_size)\n"
            "    return k * torch.prod(torch.LongTensor(list(y.size())[2:]))\n",
            "import torch\nfrom torch.nn.modules.utils import _pair\n\n\ndef hook(m, x, y):\n"
            "    out_size = _pair(m.output_size)\n"
            "    k = torch.tensor(\n        list(x.size()[2:]), dtype=torch.get_default_dtype()\n"
            "    ) / torch.tensor(out_size, dtype=torch.get_default_dtype())\n"
            "    return k * torch.prod(torch.tensor(list(y.size())[2:], dtype=torch.int64))\n",
            count=3,
        ),
        Invalid(  # a CUDA type combined with a tensor gets that tensor's device
            "import torch\n\n\ndef shifted(x: torch.Tensor, n: int):\n    return x + torch.cuda.FloatTensor(n).fill_(1)\n",
            "import torch\n\n\ndef shifted(x: torch.Tensor, n: int):\n"
            "    return x + torch.ones(n, dtype=torch.float32, device=x.device)\n",
        ),
        Invalid(  # met with the caller's tensor: TDL003's device, not a CPU factory it would report (TimeCycle)
            "import torch\n\n\ndef with_ones(X):\n    N = X.size(0)\n"
            "    O = torch.FloatTensor(N, 1).fill_(1)\n    return torch.cat((O, X), 1)\n",
            "import torch\n\n\ndef with_ones(X):\n    N = X.size(0)\n"
            "    O = torch.ones(N, 1, dtype=torch.float32, device=X.device)\n    return torch.cat((O, X), 1)\n",
        ),
        Invalid(  # the CPU branch of an is_cuda test stays on the CPU, as TDL003 leaves it
            "import torch\n\n\ndef with_ones(X):\n    N = X.size(0)\n    if X.is_cuda:\n        return X\n"
            "    else:\n        O = torch.FloatTensor(N, 1).fill_(1)\n    return torch.cat((O, X), 1)\n",
            "import torch\n\n\ndef with_ones(X):\n    N = X.size(0)\n    if X.is_cuda:\n        return X\n"
            "    else:\n        O = torch.ones(N, 1, dtype=torch.float32)\n    return torch.cat((O, X), 1)\n",
        ),
        Invalid(  # a parameter annotated int is a size (tianshou's NoisyLinear)
            "import torch\n\ndef noise(out_features: int, scale):\n    return torch.FloatTensor(out_features), torch.FloatTensor(scale)\n",
            "import torch\n\ndef noise(out_features: int, scale):\n"
            "    return torch.empty(out_features, dtype=torch.float32), torch.FloatTensor(scale)\n",
            count=2,
        ),
        Invalid(  # a long table of whole numbers: the dtype is shorter than ".0" on each
            "import torch\nT = torch.Tensor([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16, 17]])\n",
            "import torch\nT = torch.tensor(\n    [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16, 17]],\n"
            "    dtype=torch.get_default_dtype(),\n)\n",
        ),
        Invalid(  # data that are not number literals keep the default dtype explicitly
            "import torch\nmask = torch.Tensor([flag, True])\n",
            "import torch\nmask = torch.tensor([flag, True], dtype=torch.get_default_dtype())\n",
        ),
        Invalid(
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "weights = torch.cuda.FloatTensor([0.2, 0.8])\n",
            "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
            "weights = torch.tensor([0.2, 0.8], dtype=torch.float32, device=device)\n",
        ),
        Invalid(
            "import torch\n\ndef init_hidden(batch):\n    return torch.FloatTensor(batch.size(0), 128).zero_()\n",
            "import torch\n\ndef init_hidden(batch):\n"
            "    return torch.zeros(batch.size(0), 128, dtype=torch.float32)\n",
        ),
        Invalid(
            "import torch\nlabels = torch.LongTensor((1, 0, 1))\nbias = torch.Tensor([1, 2])\nscale = torch.Tensor([0.5])\n",
            "import torch\nlabels = torch.tensor((1, 0, 1))\n"
            "bias = torch.tensor([1.0, 2.0])\nscale = torch.tensor([0.5])\n",
            count=3,
        ),
        Invalid(  # torch.tensor infers int64 from whole numbers, but float32 from no data at all
            "import torch\nids = torch.LongTensor([[1, -2], [3, 4]])\nnone = torch.LongTensor([])\n",
            "import torch\nids = torch.tensor([[1, -2], [3, 4]])\nnone = torch.tensor([], dtype=torch.int64)\n",
            count=2,
        ),
        Invalid("import torch\nids = torch.LongTensor(token_ids)\n"),
        Invalid(  # written with the file's other name for torch: the fix keeps it (Coqui TTS tortoise)
            "import torch\nimport torch as th\n\ncondition = th.Tensor(1)\n",
            "import torch\nimport torch as th\n\ncondition = th.empty(1)\n",
        ),
        Invalid(  # whole numbers cast at once keep their form; cast after another call, floats
            "import torch\nids = torch.Tensor([10, 5, 2]).to(device).long()\nw = torch.Tensor([1, 2]).sum().long()\n",
            "import torch\nids = torch.tensor([10, 5, 2], device=device).long()\nw = torch.tensor([1.0, 2.0]).sum().long()\n",
            count=2,
        ),
        Invalid(  # a parameter rebound only through what keeps its device still gives it (WaveGlow's infer)
            "import torch\n\n\nclass Glow(torch.nn.Module):\n    def infer(self, x, sigma=1.0):\n"
            "        x = self.upsample(x)\n        x = x.contiguous().view(x.size(0), -1)\n"
            "        audio = torch.cuda.FloatTensor(x.size(0)).normal_()\n        return sigma * audio\n",
            "import torch\n\n\nclass Glow(torch.nn.Module):\n    def infer(self, x, sigma=1.0):\n"
            "        x = self.upsample(x)\n        x = x.contiguous().view(x.size(0), -1)\n"
            "        audio = torch.empty(x.size(0), dtype=torch.float32, device=x.device).normal_()\n"
            "        return sigma * audio\n",
        ),
        Invalid(  # rebound to something else: its device says nothing about the caller's
            "import torch\n\n\ndef noise(spect, path):\n    spect = torch.load(path)\n"
            "    return torch.cuda.FloatTensor(spect.size(0), 8).normal_()\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def noise(spect, path):\n    spect = torch.load(path)\n"
            "    return torch.empty(spect.size(0), 8, dtype=torch.float32, device=device).normal_()\n",
        ),
        Invalid(  # moved at once: the device goes into the factory (stable-dreamfusion nerf/provider.py)
            "import torch\n\n\nclass Views:\n    def pose(self, i):\n"
            "        radius = torch.FloatTensor([self.radius]).to(self.device)\n"
            "        up = torch.FloatTensor([0, 1, 0]).to(device).unsqueeze(0)\n"
            "        return radius, up, torch.LongTensor(4).to(i.device)\n",
            "import torch\n\n\nclass Views:\n    def pose(self, i):\n"
            "        radius = torch.tensor([self.radius], dtype=torch.float32, device=self.device)\n"
            "        up = torch.tensor([0, 1, 0], dtype=torch.float32, device=device).unsqueeze(0)\n"
            "        return radius, up, torch.empty(4, dtype=torch.int64, device=i.device)\n",
            count=3,
        ),
        Invalid(  # filled at once: the factory that makes it so, then moved at once (deep-text-recognition-benchmark)
            "import torch\n\n\ndef buffers(batch_size, n, device):\n"
            "    text = torch.LongTensor(batch_size, n + 1).fill_(0).to(device)\n"
            "    one_hot = torch.FloatTensor(batch_size, n).zero_()\n"
            "    mask = torch.ByteTensor(batch_size, n).fill_(1)\n"
            "    half = torch.FloatTensor(batch_size, 1).fill_(0.5)\n    return text, one_hot, mask, half\n",
            "import torch\n\n\ndef buffers(batch_size, n, device):\n"
            "    text = torch.zeros(batch_size, n + 1, dtype=torch.int64, device=device)\n"
            "    one_hot = torch.zeros(batch_size, n, dtype=torch.float32)\n"
            "    mask = torch.ones(batch_size, n, dtype=torch.uint8)\n"
            "    half = torch.empty(batch_size, 1, dtype=torch.float32).fill_(0.5)\n    return text, one_hot, mask, half\n",
            count=4,
        ),
        Invalid(  # a move with more to say, or to another tensor's place, stays a move
            "import torch\n\n\ndef f(x, device):\n    a = torch.FloatTensor([1.5]).to(device, non_blocking=True)\n"
            "    return a, torch.FloatTensor([2.5]).to(x)\n",
            "import torch\n\n\ndef f(x, device):\n    a = torch.tensor([1.5], dtype=torch.float32).to(device, non_blocking=True)\n"
            "    return a, torch.tensor([2.5], dtype=torch.float32).to(x)\n",
            count=2,
        ),
        Invalid(  # a cast with .to(dtype) too (MONAI tests/transforms/test_grid_splitd.py)
            "import torch\nexpected = torch.Tensor([[0, 1], [4, 5]]).to(torch.float32)\n",
            "import torch\nexpected = torch.tensor([[0, 1], [4, 5]]).to(torch.float32)\n",
        ),
        Invalid(  # Tacotron 2's padding mask: a size from .item(), the buffer given as out= to a
            # range that meets the argument: on the argument's device
            "import torch\n\ndef get_mask(lengths):\n    max_len = torch.max(lengths).item()\n"
            "    ids = torch.arange(0, max_len, out=torch.cuda.LongTensor(max_len))\n    return ids < lengths.unsqueeze(1)\n",
            "import torch\n\ndef get_mask(lengths):\n    max_len = torch.max(lengths).item()\n"
            "    ids = torch.arange(0, max_len, dtype=torch.int64, device=lengths.device)\n"
            "    return ids < lengths.unsqueeze(1)\n",
        ),
        Invalid(  # an `out=` placeholder only names the dtype: the factory is given it (siren)
            "import torch\nindex = torch.arange(0, n ** 3, 1, out=torch.LongTensor())\n"
            "grid = torch.linspace(\n    0,\n    1,\n    steps,\n    out=torch.Tensor(),\n)\n",
            "import torch\nindex = torch.arange(0, n ** 3, 1, dtype=torch.int64)\n"
            "grid = torch.linspace(\n    0,\n    1,\n    steps,\n    dtype=torch.get_default_dtype(),\n)\n",
            count=2,
        ),
        Invalid(  # a placeholder holding data, or a factory given a dtype already: the placeholder alone
            "import torch\nr = torch.arange(3, out=torch.LongTensor([1, 2]))\ns = torch.arange(3, dtype=torch.int32, out=torch.IntTensor())\n",
            "import torch\nr = torch.arange(3, out=torch.tensor([1, 2]))\n"
            "s = torch.arange(3, dtype=torch.int32, out=torch.empty(0, dtype=torch.int32))\n",
            count=2,
        ),
        Invalid(  # a buffer that meets no argument gets the module's device
            "import torch\n\ndef get_ids(rows):\n    max_len = len(rows)\n"
            "    return torch.arange(0, max_len, out=torch.cuda.LongTensor(max_len))\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def get_ids(rows):\n    max_len = len(rows)\n"
            "    return torch.arange(0, max_len, dtype=torch.int64, device=device)\n",
        ),
        Invalid(  # a known tensor's shape is a torch.Size: sizes; made with the tensor, on its device
            "import torch\n\ndef mask_like(matrix: torch.Tensor, m):\n"
            "    return torch.cuda.IntTensor(matrix.shape).fill_(1).view(-1, m)\n",
            "import torch\n\ndef mask_like(matrix: torch.Tensor, m):\n"
            "    return torch.ones(matrix.shape, dtype=torch.int32, device=matrix.device).view(-1, m)\n",
        ),
        Invalid(  # a name bound twice, or to data, may hold data: no fix
            "import torch\n\ndef f(rows):\n    n = len(rows)\n    n = rows\n    return torch.LongTensor(n)\n"
        ),
        Invalid("import torch\n\ndef f(array):\n    return torch.FloatTensor(array.shape)\n"),  # a NumPy shape is data
        Invalid(  # code built on Triton only runs with CUDA: the buffer stays there
            "import torch\nimport triton\n\nbuffer = torch.cuda.ByteTensor()\n",
            'import torch\nimport triton\n\nbuffer = torch.empty(0, dtype=torch.uint8, device="cuda")\n',
        ),
        Invalid(
            "import torch\nbuffer = torch.cuda.ByteTensor()\n",
            "import torch\n\n"
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
            "buffer = torch.empty(0, dtype=torch.uint8, device=device)\n",
        ),
        Invalid(
            "import torch\n\ndef setup(device):\n    torch.set_default_tensor_type(torch.cuda.FloatTensor)\n",
            "import torch\n\ndef setup(device):\n    torch.set_default_dtype(torch.float32)\n"
            "    torch.set_default_device(device)\n",
        ),
        Invalid(
            "import torch\ntorch.set_default_tensor_type('torch.DoubleTensor')\n",
            "import torch\ntorch.set_default_dtype(torch.float64)\n",
        ),
        Invalid(
            "import torch\nTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor\n"
            "valid = Tensor(imgs.size(0), 1).fill_(1.0)\n",
        ),
        Invalid(  # chained on a constructor of data the rule cannot tell: the whole expression stays (YOLOv4)
            "import torch\n\n\ndef f(anchors, n):\n"
            "    return torch.FloatTensor(anchors).view(n, 2).index_select(1, torch.LongTensor([0]))\n",
            count=2,
        ),
        Invalid(  # the same for the two sides of one operation (torchreid's FLOP hook)
            "import torch\n\n\ndef f(x, out_size):\n    return torch.Tensor(list(x.size()[2:])) / torch.Tensor(out_size)\n",
            count=2,
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.analysis.qualified_name(node.func)
        if qualified == "torch.set_default_tensor_type":
            self._default_tensor_type(node)
        elif qualified in torch_api.LEGACY_TENSOR_TYPES:
            fix = self._out_placeholder_fix(node, qualified) or self._constructor_fix(node, qualified)
            if fix is not None and self._beside_an_unfixed_constructor(node):
                fix = None  # half the expression converted would read as two ways to say one thing
            self.report(node, self.message.format(name=qualified), fix)

    def visit_Assign(self, node: cst.Assign) -> None:
        """``Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor``, later called."""
        names = [target.target.value for target in node.targets if isinstance(target.target, cst.Name)]
        if len(names) != 1 or len(node.targets) != 1:
            return
        choices = [node.value.body, node.value.orelse] if isinstance(node.value, cst.IfExp) else [node.value]
        types = [self.analysis.qualified_name(choice) for choice in choices]
        if not all(name in torch_api.LEGACY_TENSOR_TYPES for name in types):
            return
        cuda_type = next((name for name in types if name and name.startswith("torch.cuda.")), None)
        if cuda_type is None or not self._is_called(names[0]):
            return
        self.report(node.value, self.alias_message.format(alias=names[0], name=cuda_type))

    def _beside_an_unfixed_constructor(self, node: cst.Call) -> bool:
        """Another legacy constructor of the expression ``node`` is part of stays without a fix
        (its argument is neither data nor a size the rule can tell): pytorch-YOLOv4's
        ``torch.FloatTensor(anchors).view(nA, step).index_select(1, torch.LongTensor([2]))``,
        ``torch.Tensor(a) / torch.Tensor(out_size)``. The expression runs up to the statement, or
        to an element of a list, tuple, set or dict literal (each a value of its own)."""
        root: cst.CSTNode = node
        for ancestor in reversed(self.context.ancestors):
            if isinstance(ancestor, (cst.List, cst.Tuple, cst.Set, cst.Dict)) or not isinstance(
                ancestor, (cst.BaseExpression, cst.Arg, cst.SubscriptElement, cst.BaseSlice)
            ):
                break
            root = ancestor
        if root is node:
            return False
        for call in walk(root):
            if (
                call is not node
                and isinstance(call, cst.Call)
                and self.analysis.qualified_name(call.func) in torch_api.LEGACY_TENSOR_TYPES
                and not self._reads_its_arguments(call)
            ):
                return True
        return False

    def _reads_its_arguments(self, node: cst.Call) -> bool:
        """`_constructor_fix` tells the constructor's arguments as data or sizes (an ``out=``
        placeholder counts too: it has no arguments)."""
        if any(arg.keyword is not None or arg.star for arg in node.args):
            return False
        arguments = [arg.value for arg in node.args]
        if len(arguments) == 1:
            data = arguments[0]
            return isinstance(data, (cst.List, cst.Tuple)) or self._is_sequence(data) or self._is_size(data)
        return True

    # ----------------------------------------------------------------- constructors
    def _constructor_fix(self, node: cst.Call, qualified: str) -> Optional[Fix]:
        torch_name = _torch_as_written(node.func, self.analysis.imports.aliases) or self.analysis.imports.torch_alias
        if torch_name is None or any(arg.keyword is not None or arg.star for arg in node.args):
            return None
        arguments = [arg.value for arg in node.args]
        dtype = torch_api.LEGACY_TENSOR_TYPES[qualified]
        data_args = node.args
        if len(arguments) == 1 and isinstance(arguments[0], (cst.List, cst.Tuple)):
            factory = "tensor"
            floats = _as_float_data(arguments[0]) if dtype is None else None
            if floats is not None and floats is not arguments[0] and self._cast_right_away(node, arguments[0]):
                pass  # whole numbers cast at once (`.long()`): floats first would change nothing
            elif floats is not None and floats is not arguments[0] and self._past_the_line_length(arguments[0], floats):
                dtype = "torch.get_default_dtype()"  # a layout splits the arguments, not the list (20 lines for 16 numbers)
            elif floats is not None:
                data_args = [node.args[0].with_changes(value=floats)]
            elif dtype is None:
                dtype = "torch.get_default_dtype()"
            elif dtype == "torch.int64" and _whole_numbers(arguments[0]):
                dtype = None  # torch.tensor infers int64 from whole numbers: `torch.tensor([1])`
        elif len(arguments) == 1 and self._is_sequence(arguments[0]):
            factory = "tensor"  # ``torch.ByteTensor(list(enc))``: data
            if dtype is None:
                dtype = "torch.get_default_dtype()"
        elif not arguments or len(arguments) >= 2 or self._is_size(arguments[0]):
            factory = "empty"
        else:
            return None
        replaced: cst.Call = node
        filled = self._filled_at_once(node) if factory == "empty" and arguments else None
        if filled is not None:
            replaced, factory = filled
        call = node.with_changes(func=expression(f"{torch_name}.{factory}"), args=data_args)
        if not arguments:
            call = call.with_changes(args=[argument(expression("0"))])
        if dtype is not None:
            dtype_text = dtype.replace("torch.", f"{torch_name}.", 1)
            call = append_argument(call, argument(expression(dtype_text), "dtype"))
        return self._placed(node, qualified, replaced, call)

    def _filled_at_once(self, constructor: cst.Call) -> Optional[tuple[cst.Call, str]]:
        """``torch.LongTensor(b, n).fill_(0)``, ``.zero_()``, ``.fill_(1)``: the filling call
        and the factory that makes the tensor filled (``zeros``, ``ones``), rather than
        ``torch.empty(...).fill_(0)`` (deep-text-recognition-benchmark's every buffer)."""
        chained = self.context.chained_call(constructor)
        if chained is None:
            return None
        method, fill = chained
        if method == "zero_" and not fill.args:
            return fill, "zeros"
        if method != "fill_" or len(fill.args) != 1 or fill.args[0].keyword or fill.args[0].star:
            return None
        value = fill.args[0].value
        number = value.evaluated_value if isinstance(value, (cst.Integer, cst.Float)) else None
        if number == 0:
            return fill, "zeros"
        if number == 1:
            return fill, "ones"
        return None

    def _placed(self, constructor: cst.Call, qualified: str, replaced: cst.Call, call: cst.Call) -> Optional[Fix]:
        """The fix putting ``call`` in place of ``replaced``: a CUDA type's tensor also gets the
        device of the argument it is computed with, or the device in scope. A constructor moved
        at once takes that device instead (`_moved_at_once`)."""
        chained = isinstance(replaced.func, cst.Attribute) and replaced.func.value is constructor  # `.fill_(0)`
        moved = self._moved_at_once(replaced, 2 if chained else 0) if chained or replaced is constructor else None
        if moved is not None:
            move, destination = moved
            return Fix(Safety.SAFE, ((move, append_argument(call, argument(destination, "device"))),))
        if not qualified.startswith("torch.cuda."):
            caller = self.analysis.caller_device_meeting(constructor, self.context.ancestors, self.context.statement())
            if caller is not None and caller.source is not None and not cpu_chosen(self.context.ancestors, self.analysis.flow.values):
                # TDL003 would ask the new factory for the caller's device: written here, unsafe
                # as TDL003's fix, so that the fix's output is not reported again.
                placed = append_argument(call, argument(expression(f"{caller.source}.device"), "device"))
                return Fix(Safety.UNSAFE, ((replaced, placed),))
            return Fix(Safety.SAFE, ((replaced, call),))
        ancestors = self.context.ancestors
        if self.analysis.in_cuda_only_code(ancestors) or self.analysis.beside_cuda_only_code(ancestors):
            # stays on the GPU, as written
            cuda = f"{self.analysis.binder.quote}cuda{self.analysis.binder.quote}"
            return Fix(Safety.SAFE, ((replaced, append_argument(call, argument(expression(cuda), "device"))),))
        met = self._tensor_met(constructor)
        if met is not None:
            return Fix(Safety.SAFE, ((replaced, append_argument(call, argument(expression(f"{met}.device"), "device"))),))
        device = self.context.device_for(operands=self.context.operand_partners(constructor))
        call = append_argument(call, argument(expression(device.expression), "device"))
        return self.device_fix([(replaced, call)], device, Safety.SAFE)

    def _moved_at_once(self, made: cst.Call, depth: int) -> Optional[tuple[cst.Call, cst.BaseExpression]]:
        """``torch.FloatTensor([0, 1, 0]).to(device)``: the ``.to(...)`` call and the device it
        moves the new tensor to, which the factory can take as ``device=`` (the same tensor,
        made where it is used: stable-dreamfusion's ``.to(\n    self.device\n)`` once the line
        grew). Only for one device argument: a name or attribute holding a device (``device``,
        ``self.device``, ``x.device``); not a tensor, a dtype, a string (TDL002's) or more
        arguments (``non_blocking=``). ``made`` is the reported node's ``depth``-th ancestor
        (or the node itself, 0)."""
        chained = self.context.chained_call(made, depth)
        if chained is None:
            return None
        method, move = chained
        if method != "to" or len(move.args) != 1 or move.args[0].keyword is not None or move.args[0].star:
            return None
        device = move.args[0].value
        if not isinstance(device, (cst.Name, cst.Attribute)):
            return None
        if names_a_device(device) or self.analysis.value_of(device).kind is Kind.DEVICE:
            return move, device
        return None

    def _out_placeholder_fix(self, node: cst.Call, qualified: str) -> Optional[Fix]:
        """``torch.arange(n, out=torch.LongTensor())``: ``out=`` resizes the placeholder, which
        says no more than the result's dtype (and device), so the factory is given those instead."""
        holder, factory = self.context.parent(1), self.context.parent(2)
        torch_name = _torch_as_written(node.func, self.analysis.imports.aliases) or self.analysis.imports.torch_alias
        if not (
            torch_name is not None
            and isinstance(holder, cst.Arg)
            and holder.keyword is not None
            and holder.keyword.value == "out"
            and isinstance(factory, cst.Call)
            and self.analysis.qualified_name(factory.func) in _FACTORIES_WITH_OUT
            and not any(arg.keyword is not None and arg.keyword.value in ("dtype", "device") for arg in factory.args)
            and all(arg.keyword is None and not arg.star and self._is_size(arg.value) for arg in node.args)
        ):
            return None
        dtype = torch_api.LEGACY_TENSOR_TYPES[qualified] or "torch.get_default_dtype()"
        given_dtype = holder.with_changes(keyword=cst.Name("dtype"), value=expression(dtype.replace("torch.", f"{torch_name}.", 1)))
        call = factory.with_changes(args=[given_dtype if arg is holder else arg for arg in factory.args])
        return self._placed(node, qualified, factory, call)

    def _tensor_met(self, node: cst.Call) -> Optional[str]:
        """A tensor argument of the enclosing function that the new tensor (or the call it is
        the ``out=`` of) is computed with, directly or through a name computed only from it:
        Tacotron 2's ``max_len = torch.max(lengths).item()`` then ``torch.arange(0, max_len,
        out=torch.cuda.LongTensor(max_len))`` in ``def get_mask_from_lengths(lengths)`` belongs
        on ``lengths.device``."""
        functions = self.context.enclosing_functions()
        if not functions:
            return None
        target: cst.CSTNode = node
        holder, outer = self.context.parent(1), self.context.parent(2)
        if isinstance(holder, cst.Arg) and holder.keyword is not None and holder.keyword.value == "out":
            if isinstance(outer, cst.Call):
                target = outer
        return self.analysis.tensor_argument_behind(functions[0], target)

    def _past_the_line_length(self, data: cst.BaseExpression, floats: cst.BaseExpression) -> bool:
        """Whether writing ``data`` as ``floats`` pushes its one-line statement past
        `UNCONFIGURED_LINE_LENGTH` (reid-strong-baseline's ``torch.Tensor([16 whole numbers])``)."""
        statement = self.context.statement()
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        module = self.analysis.module
        text = module.code_for_node(statement.with_changes(leading_lines=())).rstrip("\r\n")
        if "\n" in text:
            return False
        depth = sum(1 for ancestor in self.context.ancestors if isinstance(ancestor, cst.IndentedBlock))
        added = len(module.code_for_node(floats)) - len(module.code_for_node(data))
        return depth * len(module.default_indent) + len(text) + added > UNCONFIGURED_LINE_LENGTH

    def _cast_right_away(self, node: cst.Call, data: cst.BaseExpression) -> bool:
        """The new tensor's dtype is replaced at once (``torch.Tensor([10, 5]).to(device).long()``,
        ``.to(torch.float32)``, only moves between) and its whole numbers are exact in any float type torch.Tensor
        could have made (up to 2**24): torch.tensor's int64 gives the same values."""
        if any(int(leaf.value) > 2**24 for leaf in walk(data) if isinstance(leaf, cst.Integer)):
            return False
        current: cst.CSTNode = node
        depth = 0
        while (chained := self.context.chained_call(current, depth)) is not None:
            method, call = chained
            if method in _CASTS:
                return not call.args
            if method == "to" and any(
                (arg.keyword is not None and arg.keyword.value == "dtype")
                or self.analysis.qualified_name(arg.value) in torch_api.DTYPES
                for arg in call.args
            ):
                return True  # `.to(torch.float32)`, `.to(device, dtype=...)`
            if method not in _MOVES:
                return False
            current, depth = call, depth + 2
        return False

    def _is_size(self, node: cst.BaseExpression, seen: frozenset[str] = frozenset()) -> bool:
        """An int literal, ``x.size(n)``, ``x.size()``, ``x.shape[n]``, ``len(x)``, ``x.item()``,
        the ``shape`` of a known tensor (a ``torch.Size``; a NumPy array's is a tuple, which the
        constructor would take as data), arithmetic of those, or a name the enclosing function
        (or the module) binds once, to one of those: ``n = torch.max(lengths).item()``."""
        if isinstance(node, cst.Integer):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            return node.func.value in ("len", "int")
        if isinstance(node, cst.BinaryOperation):
            return self._is_size(node.left, seen) and self._is_size(node.right, seen)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return node.func.attr.value in _SIZE_METHODS
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute):
            return node.value.attr.value == "shape"
        if isinstance(node, cst.Attribute) and node.attr.value == "shape":
            return self.analysis.value_of(node.value).kind is Kind.TENSOR
        if isinstance(node, cst.Name) and node.value not in seen:
            if self._int_parameter(node.value):
                return True
            value = self._only_binding(node.value)
            return value is not None and self._is_size(value, seen | {node.value})
        return False

    def _is_sequence(self, node: cst.BaseExpression, seen: frozenset[str] = frozenset()) -> bool:
        """Data for a constructor: ``list(...)`` or ``tuple(...)``, a slice of one
        (``list(output.size())[2:]``), torch's ``_pair(...)``-style helpers (always a tuple), or
        a name the enclosing function binds once to one of those (``out_size = _pair(...)``)."""
        if _makes_a_sequence(node):
            return True
        if isinstance(node, cst.Subscript) and all(isinstance(element.slice, cst.Slice) for element in node.slice):
            return _makes_a_sequence(node.value)
        if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].star:
            return self.analysis.qualified_name(node.func) in _TUPLE_HELPERS
        if isinstance(node, cst.Name) and node.value not in seen and not self._int_parameter(node.value):
            value = self._only_binding(node.value)
            return value is not None and self._is_sequence(value, seen | {node.value})
        return False

    def _int_parameter(self, name: str) -> bool:
        """A parameter of the enclosing function annotated ``int``, or not annotated and given a
        whole number as its default: a size, whatever the caller passes (``def __init__(self,
        in_features: int)``, OpenNMT's ``def all_gather_list(data, max_size=4096)``)."""
        functions = self.context.enclosing_functions()
        for param in walk(functions[0].params) if functions else ():
            if isinstance(param, cst.Param) and param.name.value == name:
                annotation = param.annotation.annotation if param.annotation is not None else None
                if annotation is None:
                    return isinstance(param.default, cst.Integer)
                return isinstance(annotation, cst.Name) and annotation.value == "int"
        return False

    def _only_binding(self, name: str) -> Optional[cst.BaseExpression]:
        """What ``name = ...`` assigns, when that is the one binding of ``name`` in the
        innermost enclosing function (or the module) and the name is no parameter there."""
        functions = self.context.enclosing_functions()
        scope: cst.CSTNode = functions[0].body if functions else self.analysis.module
        if functions and name in {p.name.value for p in walk(functions[0].params) if isinstance(p, cst.Param)}:
            return None
        values: list[Optional[cst.BaseExpression]] = []
        for node in walk(scope):
            if isinstance(node, (cst.Global, cst.Nonlocal)) and name in {n.name.value for n in node.names}:
                return None
            if any(isinstance(target, cst.Name) and target.value == name for target in bound_targets(node)):
                values.append(node.value if isinstance(node, cst.Assign) and len(node.targets) == 1 else None)
        return values[0] if len(values) == 1 else None

    def _is_called(self, name: str) -> bool:
        return any(
            isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name
            for node in walk(self.analysis.module)
        )

    # ---------------------------------------------------------- default tensor type
    def _default_tensor_type(self, node: cst.Call) -> None:
        fix = None
        target = node.args[0].value if len(node.args) == 1 and node.args[0].keyword is None else None
        legacy = None
        if target is not None:
            legacy = string_value(target) or self.analysis.qualified_name(target)
        dtype = torch_api.LEGACY_TENSOR_TYPES.get(legacy) if legacy else None
        torch_name = self.analysis.imports.torch_alias
        expression_statement, line = self.context.parent(), self.context.parent(2)
        if (
            dtype is not None
            and torch_name is not None
            and isinstance(expression_statement, cst.Expr)
            and isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and legacy is not None
        ):
            fix = self._default_fix(node, dtype, legacy.startswith("torch.cuda."), torch_name, line)
        self.report(node, self.default_type_message, fix)

    def _default_fix(self, node, dtype: str, cuda: bool, torch_name: str, line: cst.SimpleStatementLine) -> Optional[Fix]:
        dtype_text = dtype.replace("torch.", f"{torch_name}.", 1)
        set_dtype = expression(f"{torch_name}.set_default_dtype({dtype_text})")
        if not cuda:
            return Fix(Safety.SAFE, ((node, set_dtype),))
        device = self.context.device_for(computing=False)
        set_device = expression(f"{torch_name}.set_default_device({device.expression})")
        first = line.with_changes(body=[cst.Expr(set_dtype)], trailing_whitespace=cst.TrailingWhitespace())
        second = line.with_changes(body=[cst.Expr(set_device)], leading_lines=())
        return self.device_fix([(line, cst.FlattenSentinel([first, second]))], device, Safety.UNSAFE)


def _torch_as_written(func: cst.BaseExpression, aliases: dict[str, str]) -> Optional[str]:
    """The name of ``torch`` the call is written with (``th`` in ``th.Tensor(1)``, in a file
    importing torch under both names), so that the fix speaks as the line did."""
    while isinstance(func, cst.Attribute):
        func = func.value
    return func.value if isinstance(func, cst.Name) and aliases.get(func.value) == "torch" else None


#: Factories that take ``out=``.
_FACTORIES_WITH_OUT = frozenset(
    {
        "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn", "torch.randint",
        "torch.randperm", "torch.arange", "torch.range", "torch.linspace", "torch.logspace", "torch.eye",
    }
)

#: Methods that set a tensor's dtype, and methods that only move or copy it (no dtype).
#: torch's helpers that make a tuple of a number or a sequence (torch.nn.modules.utils).
_TUPLE_HELPERS = frozenset(
    f"torch.nn.modules.utils.{name}" for name in ("_single", "_pair", "_triple", "_quadruple")
)


def _makes_a_sequence(node: cst.BaseExpression) -> bool:
    """``list(...)`` or ``tuple(...)`` of one argument: a sequence, data for a constructor."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("list", "tuple")
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    )


_CASTS = frozenset({"long", "int", "short", "byte", "char", "float", "double", "half", "bfloat16", "bool"})
_MOVES = frozenset({"to", "cuda", "cpu", "contiguous", "clone", "detach"})


def _as_float_data(data: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """Literal data that ``torch.tensor`` infers as the default dtype, as ``torch.Tensor`` did:
    numbers with a float among them as written, whole numbers written as floats (``[1, 0]``
    becomes ``[1.0, 0.0]``, shorter than ``dtype=torch.get_default_dtype()``, up to 16 of them),
    ``[]`` as is. None for anything else (names, bools, hex, longer tables)."""
    leaves = _literal_leaves(data)
    if not all(isinstance(leaf, cst.Float) or (isinstance(leaf, cst.Integer) and leaf.value.isdigit()) for leaf in leaves):
        return None
    if any(isinstance(leaf, cst.Float) for leaf in leaves) or not leaves:
        return data
    if 2 * len(leaves) > len(", dtype=torch.get_default_dtype()"):
        return None  # a long table: ".0" on every entry would lengthen the line more than the dtype
    floats = data.visit(_IntegersAsFloats())
    assert isinstance(floats, cst.BaseExpression)  # a transformer that only rewrites integers keeps the expression
    return floats


def _whole_numbers(data: cst.BaseExpression) -> bool:
    """Literal data of whole numbers only, at least one: ``torch.tensor`` makes them int64."""
    leaves = _literal_leaves(data)
    return bool(leaves) and all(isinstance(leaf, cst.Integer) for leaf in leaves)


def _literal_leaves(data: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The entries of nested list and tuple literals, signs taken off."""
    leaves: list[cst.BaseExpression] = []
    pending = [data]
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.List, cst.Tuple)):
            pending.extend(element.value for element in current.elements)
        elif isinstance(current, cst.UnaryOperation) and isinstance(current.operator, cst.Minus):
            pending.append(current.expression)
        else:
            leaves.append(current)
    return leaves


class _IntegersAsFloats(cst.CSTTransformer):
    def leave_Integer(self, original_node: cst.Integer, updated_node: cst.Integer) -> cst.BaseExpression:
        return cst.Float(value=f"{int(updated_node.value)}.0", lpar=updated_node.lpar, rpar=updated_node.rpar)

