from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.devices import looks_like_device_name, names_a_device, names_cuda
from torchdevice_lint.analysis.guards import (
    in_code_named_for_cuda,
    in_cuda_only_test,
    in_test_code,
    under_device_check,
)
from torchdevice_lint.analysis.loads import computes_with_result, feeds_load_state_dict
from torchdevice_lint.analysis.tree import (
    bound_targets,
    iter_child_nodes,
    parameter_names,
    positional_arguments,
    string_value,
    walk,
)
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule
from torchdevice_lint.rules._edits import expression


class CudaLiteral(Rule):
    """
    ## What it does
    Flags a CUDA device written as a literal (`"cuda"`, `"cuda:0"`, `f"cuda:{i}"`,
    `torch.device("cuda")`, `torch.device("cuda", 0)`) where it is used as a device: a
    `device=` argument, the target of `.to(...)`, a variable named like a device, or the
    default of a `device` parameter that a call in the same file relies on, the default of a
    lookup of a device option (`kwargs.get("device", "cuda")`, `getattr(opt, "device", "cuda")`:
    the fix guards it in place), with no CPU fallback. Code under a device check, in a CUDA-only test (`@skipIf(not
    torch.cuda.is_available())`), in a function or class named for CUDA, and the per-process
    device of distributed training (`f"cuda:{local_rank}"`) are left alone.

    ## Why is this bad?
    The program then needs a GPU to run at all: on a machine without one, the first tensor
    placed there raises `Torch not compiled with CUDA enabled`. The guarded idiom
    `"cuda" if torch.cuda.is_available() else "cpu"` runs everywhere and still uses the GPU
    when there is one. Comparisons (`x.device.type == "cuda"`) and `autocast(device_type=...)`
    are not devices and are never flagged, nor is a `torch.device` only used as a dictionary
    key, an index, in a comparison or as text (`str(d)`), nor `device="cuda"` given as data:
    to a plain record or mock (`SimpleNamespace(device="cuda")`), beside other arguments
    that describe a CUDA setup (`backend="cuda"`), or by a test that fakes its environment
    (takes `monkeypatch`/`mocker`) to code that is not torch's. Code after `if not
    torch.cuda.is_available(): pytest.skip(...)` is a CUDA-only test. A file that imports
    torch only inside functions gets no module-level device line (reported, not fixed), and
    a test file without torch only hands device names to the code under test. Triton
    launchers (and all of a module that defines a Triton kernel), `bitsandbytes` and `nvdiffrast` paths, modules
    and functions CUDA-only as TDL001 says (built on Triton, TensorRT, PyCUDA or CuPy, also
    through a module of the project; waiting for the GPU; timing with CUDA events) and the
    accelerator given to CPU offloading (`enable_model_cpu_offload(device="cuda")`, which
    refuses a CPU device) are CUDA-only by construction and left alone.

    ## Example
    ```python
    device = torch.device("cuda")
    mask = torch.ones(n, device="cuda")
    ```

    ## Use instead
    ```python
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    mask = torch.ones(n, device=device)
    ```

    ## Fix safety
    A `torch.device(...)` assigned to any name (also unpacked: `rank, dev = 0,
    torch.device("cuda")`), or a string assigned to a variable or parameter default named
    like a device, gets the guarded idiom in place; any other use is
    replaced by the device already bound in scope; in a function, the device of a tensor
    parameter the call computes with (`torch.empty(e.shape, device="cuda")` in `def f(e)`
    becomes `device=e.device`, also through a name computed only from it, `n = e.size(0)`)
    comes first, then that of a tensor the factory's result meets in
    one operation requiring one device (`x * torch.ones(3, device="cuda")`) and, in an autograd
    `Function`'s `forward`/`backward` as in a module's `forward`, that of its first input; the
    repository's own accelerator switch where its code has one, as for TDL001
    (`device=torch.device("cuda" if self.use_cuda else "cpu")`). Safe for a bare `"cuda"`. Unsafe when the
    literal names an index (`"cuda:0"`, `torch.device("cuda", 1)`), since the fix drops it.
    A device given to a library outside torch (`ctranslate2.Generator(path, device="cuda")`)
    keeps its form: the guarded idiom in place, unsafe, since such a library may take only
    a string and may not run on the CPU with its other arguments; libraries known to take a
    `torch.device` (transformers, diffusers, Lightning, ...) get the device in scope. The
    `map_location` of a `torch.load` whose result only goes to a `load_state_dict` (directly, or
    through the name it is assigned to) becomes `"cpu"`, as TDL005 writes for a load without one:
    `load_state_dict` copies onto the parameters' device (safe directly, unsafe through a name).
    Device strings built at run time (`f"cuda:{i}"`, `"cuda:{}".format(i)`, `"cuda:%d" % i`,
    also inside `torch.device(...)`) are reported without a fix.
    """

    code = "TDL002"
    name = "cuda-literal"
    message = "hardcoded CUDA device {literal} has no CPU fallback"
    needles = ("cuda",)

    valid = (
        # a function calling into nvdiffrast, whose rasterizer takes CUDA tensors only (stable-dreamfusion's DMTet stage)
        "import torch\nimport nvdiffrast.torch as dr\n\n\nclass Renderer:\n    def __init__(self, tets):\n"
        '        self.verts = torch.tensor(tets, device="cuda")\n        self.glctx = dr.RasterizeCudaContext()\n',
        # the default of a device option's lookup, guarded or on the CPU
        "import torch\n\n\ndef evaluate(kw):\n    device = kw.get('device', 'cuda' if torch.cuda.is_available() else 'cpu')\n",
        "def run(opt, model):\n    model.to(getattr(opt, 'device', 'cpu'))\n    return opt.get('backend', 'cuda')\n",
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
        "def scaled(feats):\n    return feats * torch.ones(3, device=feats.device)\n",
        "def pool(pts):\n    n = pts.size(0)\n    return torch.zeros((n, 3), device=pts.device)\n",
        "class Pool(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, g):\n"
        "        return torch.zeros(g.size(), device=g.device)\n",
        # a script that asserts CUDA first runs only with it (sam2's benchmark.py)
        'import torch\n\nassert torch.cuda.is_available()\ndevice = torch.device("cuda")\n',
        'if x.device.type == "cuda":\n    pass',
        'with torch.autocast(device_type="cuda"):\n    pass',
        'if torch.cuda.is_available():\n    device = "cuda"\nelse:\n    device = "cpu"',
        'backend = "cuda"',
        'print("running on cuda")',
        'x = x.to("cpu")',
        'device = f"cuda:{local_rank}"',
        'import torch\n\ndevice = torch.device("cuda:{}".format(args.local_rank))\n',
        'props = torch.cuda.get_device_properties(torch.device("cuda"))',
        'def setup(self):\n    if not torch.cuda.is_available():\n        return\n    self.device = torch.device("cuda")',
        'def test_to_device():\n    if not torch.cuda.is_available():\n        pytest.skip("CUDA not available")\n'
        '    x = x.to("cuda")',
        '@unittest.skipIf(not torch.cuda.is_available(), "needs a GPU")\ndef test_kernel():\n    x = torch.ones(2, device="cuda")',
        'if world_size > 1:\n    device = torch.device("cuda", local_rank)',
        'train = dict(device="cuda", max_iter=10)',
        'def fit(model, device="cuda"):\n    model.to(device)\n\nfit(net, "cpu")\nfit(net, device=d)',
        'class CUDAAccelerator:\n    def devices(self, ids):\n        return [torch.device("cuda", i) for i in ids]',
        'def test_keys():\n    d0 = torch.device("cuda:0")\n    table = {d0: 1, torch.device("cuda:1"): 2}\n'
        "    assert table[d0] == 1",
        'import types\nfake_target = types.SimpleNamespace(device="cuda", dtype=None)',
        "from core.inference.diffusion_memory import apply_memory_plan\n\n\ndef test_apply_falls_back():\n"
        '    pipe = _RecordingPipe()\n    apply_memory_plan(pipe, plan, device="cuda")\n'
        '    assert pipe.offload_device == "cuda"',
        "import torch\nimport triton\n\n\n@triton.jit\ndef _kernel(x_ptr):\n    pass\n\n\n"
        "def test_kernel(dim=8):\n    x = torch.randn(dim, device='cuda')\n    assert fast_op(x).shape == x.shape",
        'target = DeviceTarget(device="cuda", backend="cuda", vendor="nvidia")',
        'def test_plan(monkeypatch):\n    monkeypatch.setattr(mem, "gpu_count", lambda: 1)\n'
        '    assert apply_memory_plan(pipe, plan, device="cuda") == "cuda"',
        "def test_cache_keeps_per_device_entries(monkeypatch):\n"
        "    monkeypatch.setattr(torch.linalg, 'pinv', fake_pinv)\n"
        "    device_0 = torch.device('cuda:0')\n    device_1 = torch.device('cuda:1')\n"
        "    matrix_0 = resampler._get_or_create_pinv_matrix(new_size, device_0)\n"
        "    matrix_1 = replica._get_or_create_pinv_matrix(new_size, device_1)\n"
        "    assert resampler._get_or_create_pinv_matrix(new_size, device_0) is matrix_0",
        'def test_names(monkeypatch):\n    d0 = torch.device("cuda:0")\n    assert str(d0) == "cuda:0"\n    assert {d0: 1}[d0] == 1',
        'import triton\n\ndef launch(x):\n    out = torch.empty(x.shape, device="cuda")\n    _kernel[(1,)](x, out)\n    return out',
        # a module importing Triton at module level: built on Triton kernels (unsloth's MoE autotuner)
        'import torch\nimport triton\n\n\ndef tune(n):\n    device = "cuda"\n    return torch.randn(n, device=device)\n',
        # TensorRT and PyCUDA only run with CUDA
        "import pycuda.driver as cuda\nimport tensorrt as trt\nimport torch\n\n"
        'cuda.init()\n\nif __name__ == "__main__":\n    pipe = build()\n    pipe = pipe.to("cuda")\n',
        # a function that cannot finish without CUDA: it waits for the GPU (unsloth's xformers probe)
        "import torch\n\n\ndef runs_here():\n    try:\n"
        '        q = torch.zeros((1, 8, 1, 64), device="cuda")\n        attention(q, q, q)\n'
        "        torch.cuda.synchronize()\n        return True\n    except Exception:\n        return False\n",
        # a module that times GPU work with CUDA events (diffusers' profiling_utils.py)
        "import torch\n\n\ndef benchmark_fn(f):\n    start = torch.cuda.Event(enable_timing=True)\n"
        "    end = torch.cuda.Event(enable_timing=True)\n    start.record()\n    f()\n    end.record()\n"
        "    torch.cuda.synchronize()\n    return start.elapsed_time(end)\n\n\n"
        'class Profiler:\n    def setup(self, pipe):\n        pipe.to("cuda")\n',
        "from ..testing_utils import torch_device\n\ndef test_offload_id(sd):\n"
        '    sd.enable_model_cpu_offload(gpu_id=5, device="cuda")\n    assert sd._offload_gpu_id == 5',
    )
    invalid = (
        Invalid(  # torch.zeros_like(values) shows values a tensor, in a function called nowhere in the file
            "import torch\n\n\ndef pad(values, n):\n    out = torch.zeros_like(values)\n"
            "    idx = torch.arange(n, device='cuda')\n    return out, idx\n",
            "import torch\n\n\ndef pad(values, n):\n    out = torch.zeros_like(values)\n"
            "    idx = torch.arange(n, device=values.device)\n    return out, idx\n",
        ),
        Invalid(  # the default of a device option's lookup: where the caller gives none, CUDA
            "import torch\n\n\ndef eval_split(model, loader, eval_kwargs={}):\n"
            "    device = eval_kwargs.get('device', 'cuda')\n",
            "import torch\n\n\ndef eval_split(model, loader, eval_kwargs={}):\n"
            "    device = eval_kwargs.get('device', 'cuda' if torch.cuda.is_available() else 'cpu')\n",
        ),
        Invalid(
            "import torch\n\n\ndef run(opt, model):\n    model.to(getattr(opt, 'device', 'cuda'))\n",
            "import torch\n\n\ndef run(opt, model):\n"
            "    model.to(getattr(opt, 'device', 'cuda' if torch.cuda.is_available() else 'cpu'))\n",
        ),
        Invalid(  # an autograd Function runs on its inputs' device, as a module's forward (Occupancy Networks)
            "import torch\n\n\nclass Pool(torch.autograd.Function):\n    @staticmethod\n"
            "    def forward(ctx, feats, pts):\n        return torch.zeros((pts.size(0), feats.size(1)), device='cuda')\n",
            "import torch\n\n\nclass Pool(torch.autograd.Function):\n    @staticmethod\n"
            "    def forward(ctx, feats, pts):\n        return torch.zeros((pts.size(0), feats.size(1)), device=feats.device)\n",
        ),
        Invalid(  # the class's own switch guards its other moves: the device is built from it
            "import torch\n\n\nclass M:\n    def __init__(self, args):\n        self.use_cuda = args.cuda\n"
            "        self.net = Net()\n        if self.use_cuda:\n            self.net.cuda()\n\n"
            "    def noise(self, n):\n        return torch.zeros(n, device='cuda')\n",
            "import torch\n\n\nclass M:\n    def __init__(self, args):\n        self.use_cuda = args.cuda\n"
            "        self.net = Net()\n        if self.use_cuda:\n            self.net.cuda()\n\n"
            "    def noise(self, n):\n        return torch.zeros(n, device=torch.device('cuda' if self.use_cuda else 'cpu'))\n",
        ),
        Invalid(  # sized from a tensor argument a statement earlier (Occupancy Networks' kernels)
            "import torch\n\n\ndef pool(feats, pts):\n    n = pts.size(0)\n"
            "    return torch.zeros((n, feats.size(1)), device='cuda')\n",
            "import torch\n\n\ndef pool(feats, pts):\n    n = pts.size(0)\n"
            "    return torch.zeros((n, feats.size(1)), device=feats.device)\n",
        ),
        Invalid(  # the tensor the new one meets in the same operation
            "import torch\n\n\ndef scaled(points: torch.Tensor, feats: torch.Tensor):\n"
            "    return feats * torch.ones(3, device='cuda')\n",
            "import torch\n\n\ndef scaled(points: torch.Tensor, feats: torch.Tensor):\n"
            "    return feats * torch.ones(3, device=feats.device)\n",
        ),
        Invalid(
            'import torch\ndevice = torch.device("cuda")\n',
            'import torch\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n',
        ),
        Invalid(
            "import torch\nDEVICE = 'cuda'\n",
            "import torch\nDEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'\n",
        ),
        Invalid(
            'import torch\n\ndef mask(n, device):\n    return torch.ones(n, device="cuda:0")\n',
            "import torch\n\ndef mask(n, device):\n    return torch.ones(n, device=device)\n",
        ),
        Invalid(
            'import torch\nmodel = Net().to("cuda")\n',
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
            "model = Net().to(device)\n",
        ),
        Invalid('x = x.to(f"cuda:{i}")\n'),
        Invalid(  # device strings built at run time: reported, the index left to the author
            'import torch\n\na = torch.device("cuda:{}".format(i))\nb = torch.device("cuda:%d" % i)\n'
            'c = torch.device(f"cuda:{i}")\n',
            count=3,
        ),
        Invalid(
            'import torch\n\ndef fit(model, device="cuda"):\n    model.to(device)\n\nfit(net)\n',
            'import torch\n\ndef fit(model, device="cuda" if torch.cuda.is_available() else "cpu"):\n'
            "    model.to(device)\n\nfit(net)\n",
        ),
        Invalid('import torch\ny = x.to(torch.device("cuda", 1))\n', count=1),
        Invalid(
            'import torch\n\ndef swiglu(e: torch.Tensor, g):\n    h = torch.empty(e.shape, dtype=e.dtype, device="cuda")\n'
            "    return h.copy_(e * g)\n",
            'import torch\n\ndef swiglu(e: torch.Tensor, g):\n    h = torch.empty(e.shape, dtype=e.dtype, device=e.device)\n'
            "    return h.copy_(e * g)\n",
        ),
        Invalid(
            'import torch\nGPU = torch.device("cuda", 0)\n',
            'import torch\nGPU = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n',
        ),
        Invalid(  # `dev` bound under `if distributed:` is unbound in the `else:` branch (never `dev = dev`);
            # unpacked into a name of its own, the device is guarded in place as in a plain assignment
            'import torch\n\n\ndef main(distributed, rank):\n    if distributed:\n        dev = torch.device("cuda", rank)\n'
            '    else:\n        rank, dev = 0, torch.device("cuda")\n    return dev\n',
            'import torch\n\n\ndef main(distributed, rank):\n    if distributed:\n        dev = torch.device("cuda", rank)\n'
            '    else:\n        rank, dev = 0, torch.device("cuda" if torch.cuda.is_available() else "cpu")\n    return dev\n',
        ),
        Invalid(  # one name: a `device` parameter elsewhere does not rename the module's binding
            'import torch\n\n\ndef prepare(x, device=None):\n    return x.to(device)\n\n\nmodel = Net().to("cuda")\n',
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            'def prepare(x, device=None):\n    return x.to(device)\n\n\nmodel = Net().to(device)\n',
        ),
        Invalid(  # numba's device is not torch's: neither reused nor overwritten
            "import torch\nfrom numba import cuda\n\n"
            "device = cuda.get_current_device()\n\n\ndef run(pipe):\n"
            '    return pipe.to("cuda")\n',
            "import torch\nfrom numba import cuda\n\n"
            'torch_device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
            "device = cuda.get_current_device()\n\n\ndef run(pipe):\n"
            "    return pipe.to(torch_device)\n",
        ),
        Invalid(  # an optional import of a CUDA-only library: the module has a path without it (MONAI)
            'import torch\nfrom monai.utils import optional_import\n\ncp, has_cp = optional_import("cupy")\n\n\n'
            'def prepare(x):\n    return x.to("cuda")\n',
            'import torch\nfrom monai.utils import optional_import\n\n'
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
            'cp, has_cp = optional_import("cupy")\n\n\n'
            "def prepare(x):\n    return x.to(device)\n",
        ),
        Invalid(  # Triton imported optionally: the module has a path without it
            'import torch\n\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n\n\n'
            'def make_inputs(n):\n    return torch.randn(n, device="cuda")\n',
            'import torch\n\ntry:\n    import triton\nexcept ImportError:\n    triton = None\n\n'
            'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def make_inputs(n):\n    return torch.randn(n, device=device)\n",
        ),
        Invalid(  # waiting for the GPU only when there is one: the function runs without it
            'import torch\n\n\ndef run(model, x):\n    y = model(x.to("cuda"))\n'
            "    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n    return y\n",
            'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\n'
            "def run(model, x):\n    y = model(x.to(device))\n"
            "    if torch.cuda.is_available():\n        torch.cuda.synchronize()\n    return y\n",
        ),
        Invalid(  # a library outside torch wants the string (ctranslate2 refuses a torch.device,
            # OpenNMT-py loss.py): the guarded idiom in place, unsafe (its CPU path is not known)
            'import ctranslate2\nimport torch\n\n\ndef prior(path):\n'
            '    return ctranslate2.Generator(path, device="cuda", compute_type="float16")\n',
            'import ctranslate2\nimport torch\n\n\ndef prior(path):\n'
            '    return ctranslate2.Generator(\n        path,\n        device="cuda" if torch.cuda.is_available() else "cpu",\n'
            '        compute_type="float16",\n    )\n',
        ),
        Invalid(  # transformers takes a torch.device: the device in scope
            'import torch\nfrom transformers import pipeline\n\n\ndef asr(device):\n'
            '    return pipeline("asr", device="cuda")\n',
            'import torch\nfrom transformers import pipeline\n\n\ndef asr(device):\n'
            '    return pipeline("asr", device=device)\n',
        ),
        Invalid(  # a test faking its environment still places its own tensors through torch
            'import torch\n\n\ndef test_ones(monkeypatch):\n    return torch.ones(2, device="cuda")\n'
        ),
        Invalid(  # torch imported only in the function (lazily): no module-level device line, no fix
            'import numpy as np\n\n\ndef gen(pipe, seed):\n    import torch\n\n'
            '    g = torch.Generator(device="cuda").manual_seed(seed)\n    return pipe(generator=g)\n',
            'import numpy as np\n\n\ndef gen(pipe, seed):\n    import torch\n\n'
            '    g = torch.Generator(device="cuda").manual_seed(seed)\n    return pipe(generator=g)\n',
        ),
        Invalid(  # no torch in reach of the site for the conditional: reported, not rewritten
            'def setup():\n    import torch\n\n    return torch.ones(1)\n\n\ndef config():\n    device = "cuda"\n    return device\n',
            'def setup():\n    import torch\n\n    return torch.ones(1)\n\n\ndef config():\n    device = "cuda"\n    return device\n',
        ),
        Invalid(  # a function's own import reaches its body
            'def config():\n    import torch\n\n    device = "cuda"\n    return torch.ones(1, device=device)\n',
            'def config():\n    import torch\n\n    device = "cuda" if torch.cuda.is_available() else "cpu"\n'
            "    return torch.ones(1, device=device)\n",
        ),
        Invalid(  # a local `device` that is not one hides the module's binding: no fix
            'import torch\n\n\ndef run(x):\n    y = x.to("cuda")\n    device = None\n    return y, device\n',
            'import torch\n\n\ndef run(x):\n    y = x.to("cuda")\n    device = None\n    return y, device\n',
        ),
        Invalid(  # a load that only fills a module's parameters: load_state_dict copies onto their device
            "import torch\n\n\ndef restore(model, path):\n"
            "    model.load_state_dict(torch.load(path, map_location=torch.device('cuda')))\n",
            "import torch\n\n\ndef restore(model, path):\n    model.load_state_dict(torch.load(path, map_location='cpu'))\n",
        ),
        Invalid(  # the same through one name (pytorch-YOLOv4's demo_pytorch2onnx.py), unsafe as TDL005's
            "import torch\n\n\ndef export(model, path):\n    sd = torch.load(path, map_location='cuda')\n    model.load_state_dict(sd)\n",
            "import torch\n\n\ndef export(model, path):\n    sd = torch.load(path, map_location='cpu')\n    model.load_state_dict(sd)\n",
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._calls: Optional[dict[str, list[cst.Call]]] = None
        #: scope -> name -> its uses there, each with whether it is only looked up: read once per
        #: scope, not once per device literal (a module of 160 ``torch.device`` lines took 5 s).
        self._name_uses: dict[cst.CSTNode, dict[str, list[tuple[cst.Name, bool]]]] = {}
        self._data_names: dict[tuple[cst.CSTNode, bool], set[cst.Name]] = {}

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._check(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._check(node)

    def visit_Call(self, node: cst.Call) -> None:
        if self.analysis.qualified_name(node.func) == "torch.device":
            self._check(node)

    def _check(self, node: cst.BaseExpression) -> None:
        literal = self._cuda_literal(node)
        if literal is None or self._is_guarded() or self._inside_cuda_api():
            return
        if self.analysis.imports.torch_alias is None and in_test_code(self.analysis.imports, self.context.ancestors):
            return  # a test without torch hands device names to the code under test as data
        parent = self.context.parent()
        if isinstance(node, cst.Call):
            if _only_looked_up(node, parent) or self._assigned_only_looked_up(parent):
                return
        elif not self._used_as_device(parent):
            return
        if isinstance(parent, cst.Param) and not self._default_is_relied_on(parent):
            return
        if isinstance(parent, cst.Arg) and self._inside_torch_device(parent):
            return  # reported once, on the enclosing torch.device(...) call
        message = self.message.format(literal=literal)
        self.report(node, message, self._fix(node, literal, parent))

    def _cuda_literal(self, node: cst.BaseExpression) -> Optional[str]:
        """The text to quote in the message, or None if this is not a CUDA literal."""
        if isinstance(node, cst.Call):
            args = positional_arguments(node)
            text = string_value(args[0]) if args else None
            if text is None and args:
                built = _formatted_cuda_string(args[0])
                return None if built is None else f"torch.device({built})"
            if text is None or not names_cuda(text) or (len(args) > 1 and _mentions_rank(args[1])):
                return None
            return f"torch.device({text!r})"
        if isinstance(node, cst.FormattedString):
            first = node.parts[0] if node.parts else None
            if not (isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda")) or any(
                _mentions_rank(part.expression) for part in node.parts if isinstance(part, cst.FormattedStringExpression)
            ):
                return None
            return f"f{node.start[-1]}{first.value}...{node.end}"
        text = string_value(node)
        return repr(text) if text is not None and names_cuda(text) else None

    def _used_as_device(self, parent: Optional[cst.CSTNode]) -> bool:
        if self._default_of_device_lookup(parent):
            return True
        if isinstance(parent, cst.Arg):
            call = self.context.parent(2)
            if isinstance(call, cst.Call) and self._describes_a_device(call, parent):
                return False
            if isinstance(call, cst.Call) and self._is_map_location(parent, call):
                return True
            if parent.keyword is not None:
                return parent.keyword.value == "device"
            if not isinstance(call, cst.Call) or not call.args or call.args[0] is not parent:
                return False
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "to":
                return True
            return self.analysis.qualified_name(call.func) in ("torch.device", "torch.set_default_device")
        return self._assigned_to_device_name(parent)

    def _default_of_device_lookup(self, parent: Optional[cst.CSTNode]) -> bool:
        """The default of a lookup of a device option: ``kwargs.get('device', 'cuda')``,
        ``getattr(opt, 'device', 'cuda')`` (self-critical.pytorch's eval_utils moves every batch
        there when the script gives no ``--device``)."""
        call = self.context.parent(2)
        if not (isinstance(parent, cst.Arg) and parent.keyword is None and isinstance(call, cst.Call)):
            return False
        args = call.args
        if any(arg.keyword is not None or arg.star for arg in args):
            return False
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "get" and len(args) == 2:
            key = args[0]
        elif isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(args) == 3:
            key = args[1]
        else:
            return False
        name = string_value(key.value)
        return args[-1] is parent and name is not None and looks_like_device_name(name)

    def _describes_a_device(self, call: cst.Call, arg: cst.Arg) -> bool:
        """``device="cuda"`` given as data, not to place anything: an entry of a plain record
        (``dict``, ``SimpleNamespace``, a mock), one of several arguments that all describe a
        CUDA setup (``Target(device="cuda", backend="cuda", vendor="nvidia")``: rewriting one
        makes the record contradict itself), or an argument a test that fakes its environment
        (``monkeypatch``, ``mocker``) passes to the code under test rather than to torch."""
        qualified = self.analysis.qualified_name(call.func) or ""
        called = call.func.attr.value if isinstance(call.func, cst.Attribute) else qualified or _name_of(call.func)
        if qualified in _RECORDS or qualified.startswith("unittest.mock.") or called in _RECORD_NAMES:
            return True
        if qualified.startswith("torch.") or called in ("to", "cuda"):
            return False
        for other in call.args:
            text = string_value(other.value) if other is not arg else None
            if text is not None and (names_cuda(text) or text.lower() in ("nvidia", "gpu")):
                return True
        return self._fakes_its_environment()

    def _fakes_its_environment(self) -> bool:
        """Inside a test taking a fixture that fakes the environment (``monkeypatch``, ``mocker``)."""
        return any(
            name in _FAKING_FIXTURES for function in self.context.enclosing_functions() for name in parameter_names(function)
        )

    def _given_to_code_under_test(self, scope: cst.CSTNode) -> set[cst.Name]:
        """Names passed as arguments to calls that are neither torch's nor ``.to``/``.cuda``."""
        names: set[cst.Name] = set()
        for node in walk(scope):
            if not isinstance(node, cst.Call):
                continue
            qualified = self.analysis.qualified_name(node.func) or ""
            method = node.func.attr.value if isinstance(node.func, cst.Attribute) else ""
            if qualified.startswith("torch.") or method in ("to", "cuda"):
                continue
            names.update(arg.value for arg in node.args if isinstance(arg.value, cst.Name))
        return names

    def _assigned_to_device_name(self, parent: Optional[cst.CSTNode]) -> bool:
        if isinstance(parent, cst.Assign):
            return any(names_a_device(target.target) for target in parent.targets)
        if isinstance(parent, cst.AnnAssign):
            return names_a_device(parent.target)
        if isinstance(parent, cst.Param):
            return looks_like_device_name(parent.name.value)
        return False

    def _assigned_only_looked_up(self, parent: Optional[cst.CSTNode]) -> bool:
        """``dev = torch.device("cuda:0")`` whose every use is a dictionary key, a comparison
        or a string (``str(dev) == "cuda:0"``), or, in a test that fakes its environment, an
        argument to code that is not torch's (timm's test_layers.py: two devices as cache keys
        with torch.linalg.pinv monkeypatched): the device value never places a tensor."""
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return False
        target = parent.targets[0].target
        if not isinstance(target, cst.Name):
            return False
        functions = self.context.enclosing_functions()
        scope: cst.CSTNode = functions[0] if functions else self.analysis.module
        uses = [(name, looked_up) for name, looked_up in self._uses_in(scope).get(target.value, ()) if name is not target]
        data = self._read_as_data(scope)
        return bool(uses) and all(looked_up or name in data for name, looked_up in uses)

    def _uses_in(self, scope: cst.CSTNode) -> dict[str, list[tuple[cst.Name, bool]]]:
        uses = self._name_uses.get(scope)
        if uses is None:
            uses = self._name_uses[scope] = {}
            for node in walk(scope):
                for child, looked_up in _children_with_role(node):
                    if isinstance(child, cst.Name):
                        uses.setdefault(child.value, []).append((child, looked_up))
        return uses

    def _read_as_data(self, scope: cst.CSTNode) -> set[cst.Name]:
        """The names of ``scope`` read as text (``str(dev)``), or handed as data to the code
        under test by a test that fakes its environment."""
        fakes = self._fakes_its_environment()
        data = self._data_names.get((scope, fakes))
        if data is None:
            data = _formatted_names(scope)
            if fakes:
                data |= self._given_to_code_under_test(scope)
            self._data_names[(scope, fakes)] = data
        return data

    def _default_is_relied_on(self, param: cst.Param) -> bool:
        """A ``device="cuda"`` default matters when this file calls without passing it.

        Library functions take a device from their callers; only a call in the same file
        that leaves the default in place proves the program runs on CUDA unconditionally.
        """
        function = next((a for a in reversed(self.context.ancestors) if isinstance(a, cst.FunctionDef)), None)
        if function is None:
            return False
        positional = [*function.params.posonly_params, *function.params.params]
        callable_name = function.name.value
        index = positional.index(param) if param in positional else None
        if callable_name == "__init__":
            owner = next((a for a in reversed(self.context.ancestors) if isinstance(a, cst.ClassDef)), None)
            if owner is None:
                return False
            callable_name = owner.name.value
            index = index - 1 if index is not None else None
        elif index is not None and positional and positional[0].name.value in ("self", "cls"):
            return False  # a method: its call sites are not resolvable by name
        for call in self._calls_by_name().get(callable_name, ()):
            if any(arg.star for arg in call.args):
                continue
            passed_by_keyword = any(arg.keyword is not None and arg.keyword.value == param.name.value for arg in call.args)
            passed_by_position = index is not None and len(positional_arguments(call)) > index
            if not (passed_by_keyword or passed_by_position):
                return True
        return False

    def _calls_by_name(self) -> dict[str, list[cst.Call]]:
        if self._calls is None:
            self._calls = {}
            for node in walk(self.analysis.module):
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
                    self._calls.setdefault(node.func.value, []).append(node)
        return self._calls

    def _inside_torch_device(self, arg: cst.Arg) -> bool:
        call = self.context.parent(2)
        return isinstance(call, cst.Call) and self.analysis.qualified_name(call.func) == "torch.device"

    def _is_guarded(self) -> bool:
        module, ancestors = self.analysis.module, self.context.ancestors
        return (
            under_device_check(module, ancestors)
            or in_cuda_only_test(module, ancestors)
            or in_code_named_for_cuda(ancestors)
            or self.analysis.in_cuda_only_code(ancestors)
            or self.analysis.beside_cuda_only_code(ancestors)
        )

    def _inside_cuda_api(self) -> bool:
        """Arguments of ``torch.cuda.*`` calls, which only exist on CUDA anyway, and of CPU
        offloading (``pipe.enable_model_cpu_offload(device="cuda")``): its device is the
        accelerator modules are moved to from the CPU, and diffusers refuses a CPU one, so the
        portable fallback would break the call."""
        for ancestor in reversed(self.context.ancestors):
            if isinstance(ancestor, cst.Call):
                name = self.analysis.qualified_name(ancestor.func) or ""
                called = ancestor.func.attr.value if isinstance(ancestor.func, cst.Attribute) else name
                if name.startswith("torch.cuda.") or "cpu_offload" in called:
                    return True
        return False

    def _fix(self, node: cst.BaseExpression, literal: str, parent: Optional[cst.CSTNode]) -> Optional[Fix]:
        if isinstance(node, cst.FormattedString):
            return None
        if isinstance(node, cst.Call) and string_value(positional_arguments(node)[0]) is None:
            return None  # torch.device(f"cuda:{i}"): which index the code meant is left to its author
        has_index = ":" in literal or (isinstance(node, cst.Call) and len(node.args) > 1)
        safety = Safety.UNSAFE if has_index else Safety.SAFE
        assigned_device_object = isinstance(node, cst.Call) and (
            isinstance(parent, (cst.Assign, cst.AnnAssign)) or self._unpacked_into_a_name(parent)
        )
        if assigned_device_object or self._assigned_to_device_name(parent) or self._default_of_device_lookup(parent):
            tensor = self._tensor_of_every_use(parent) if isinstance(node, cst.Call) else None
            if tensor is not None:
                return Fix(safety, ((node, expression(f"{tensor}.device")),))
            guarded = self._guarded(node)
            return Fix(safety, ((node, guarded),)) if guarded is not None else None
        if self._given_to_another_library(parent):
            # A library outside torch may want the device in the form it was written (ctranslate2
            # takes a string, never a ``torch.device``), and whether it runs on the CPU at all
            # with the other arguments is not known: the guarded idiom in place, as an unsafe fix.
            guarded = self._guarded(node)
            return Fix(Safety.UNSAFE, ((node, guarded),)) if guarded is not None else None
        for_state = self._loaded_for_a_state_dict(parent)
        if for_state is not None:
            quote = self.analysis.binder.quote
            return Fix(for_state, ((node, expression(f"{quote}cpu{quote}")),))
        tensor = self._tensor_computed_with(parent)
        if tensor is not None:
            return Fix(safety, ((node, expression(f"{tensor}.device")),))
        call = self.context.parent(2)
        made = (
            isinstance(parent, cst.Arg)
            and parent.keyword is not None
            and parent.keyword.value == "device"
            and isinstance(call, cst.Call)
            and self.analysis.qualified_name(call.func) in torch_api.FACTORIES
        )
        operands = self.context.operand_partners(call) if made and isinstance(call, cst.Call) else []
        device = self.context.device_for(operands=operands)
        return self.device_fix([(node, expression(device.expression))], device, safety)

    def _is_map_location(self, arg: cst.Arg, call: cst.Call) -> bool:
        """``arg`` is the ``map_location`` of ``torch.load(...)``, by keyword or second in place."""
        if self.analysis.qualified_name(call.func) != "torch.load":
            return False
        if arg.keyword is not None:
            return arg.keyword.value == "map_location"
        positional = [given for given in call.args if given.keyword is None and not given.star]
        return len(positional) > 1 and positional[1] is arg

    def _loaded_for_a_state_dict(self, parent: Optional[cst.CSTNode]) -> Optional[Safety]:
        """``torch.load(p, map_location=torch.device("cuda"))`` whose result only goes to a
        ``load_state_dict`` (directly or through the name it is assigned to), which copies onto
        the parameters' device: the CPU serves, as TDL005 writes for a load without one. The
        fix's safety (safe directly, as TDL005's), or None."""
        call = self.context.parent(2)
        if not (isinstance(parent, cst.Arg) and isinstance(call, cst.Call) and self._is_map_location(parent, call)):
            return None
        ancestors = self.context.ancestors[:-2]
        fed = feeds_load_state_dict(ancestors)
        if fed is None or computes_with_result(self.analysis.imports, ancestors):
            return None
        return Safety.SAFE if fed else Safety.UNSAFE

    def _given_to_another_library(self, parent: Optional[cst.CSTNode]) -> bool:
        """``ctranslate2.Generator(path, device="cuda")``: the literal is an argument of a call
        imported from a library that is neither torch nor one known to take a ``torch.device``
        (transformers, diffusers, Lightning, ...), nor a module of the project."""
        call = self.context.parent(2)
        if not (isinstance(parent, cst.Arg) and isinstance(call, cst.Call)):
            return False
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("to", "cuda"):
            return False
        qualified = self.analysis.qualified_name(call.func)
        if qualified is None or qualified.startswith("."):
            return False  # not imported (a local function, a method of an object) or a relative import
        if qualified.split(".", 1)[0] in TORCH_DEVICE_LIBRARIES:
            return False
        return not self.analysis.project.imports_project_module(qualified)

    def _tensor_computed_with(self, parent: Optional[cst.CSTNode]) -> Optional[str]:
        """In ``def kernel(e, g)``, ``torch.empty(e.shape, device="cuda")`` belongs with ``e``,
        and so does ``torch.zeros((n, 3), device="cuda")`` after ``n = e.size(0)``."""
        call = self.context.parent(2)
        functions = self.context.enclosing_functions()
        if not (isinstance(parent, cst.Arg) and parent.keyword is not None and isinstance(call, cst.Call) and functions):
            return None
        direct = self.analysis.binder.tensor_parameter_in(functions[0], call)
        return direct if direct is not None else self.analysis.tensor_argument_behind(functions[0], call)

    def _tensor_of_every_use(self, parent: Optional[cst.CSTNode]) -> Optional[str]:
        """dgcnn's ``get_graph_feature(x)``: ``device = torch.device('cuda')`` whose every use is a
        torch factory's ``device=`` computed with one tensor parameter ``x`` (``torch.arange(0,
        batch_size, device=device)`` after ``batch_size = x.size(0)``) is the device ``x`` is on,
        as that literal in each factory would be: ``device = x.device``. Not where ``x`` is bound
        again from the binding on (``x = x.to(device)``: another use anyway), nor where the name is
        bound twice, read in a nested function or used any other way."""
        functions = self.context.enclosing_functions()
        if not (functions and isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return None
        target, function = parent.targets[0].target, functions[0]
        if not isinstance(target, cst.Name) or target.value in parameter_names(function):
            return None
        factories = torch_api.FACTORIES
        uses = _device_uses(function.body, target, lambda call: self.analysis.qualified_name(call.func) in factories)
        if not uses:
            return None
        tensors = {
            self.analysis.binder.tensor_parameter_in(function, use) or self.analysis.tensor_argument_behind(function, use)
            for use, _ in uses
        }
        tensor = tensors.pop() if len(tensors) == 1 else None
        order = self.analysis.flow.statement_order
        statement = self.context.statement()
        site = order.get(statement, -1) if statement is not None else -1
        last = max(order.get(used_in, site) for _, used_in in uses)
        if tensor is None or any(site <= order.get(s, site) <= last for s in _statements_binding(function.body, tensor)):
            return None  # ``x`` bound again between the device and a use of it (after the last one: no matter)
        return tensor

    def _unpacked_into_a_name(self, parent: Optional[cst.CSTNode]) -> bool:
        """``rank, dev = 0, torch.device("cuda")``: the literal is bound to a name of its own, as
        in a plain assignment (diffusers' examples/cosmos3/inference_cosmos3.py)."""
        values, statement = self.context.parent(2), self.context.parent(3)
        if not (isinstance(parent, cst.Element) and isinstance(values, cst.Tuple) and isinstance(statement, cst.Assign)):
            return False
        if statement.value is not values or len(statement.targets) != 1:
            return False
        targets = statement.targets[0].target
        if not isinstance(targets, (cst.Tuple, cst.List)) or len(targets.elements) != len(values.elements):
            return False
        index = next(i for i, element in enumerate(values.elements) if element is parent)
        return isinstance(targets.elements[index].value, cst.Name)

    def _guarded(self, node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        """The guarded idiom, in the literal's own form (a string or a ``torch.device``); None
        where no ``torch`` is in reach (a file that imports it only in other functions, or never)."""
        torch_name = self.analysis.imports.torch_reachable(self.context.enclosing_functions())
        if torch_name is None:
            return None
        string = node.args[0].value if isinstance(node, cst.Call) else node
        quote = string.quote if isinstance(string, cst.SimpleString) else self.analysis.binder.quote
        choice = expression(
            f"{quote}cuda{quote} if {torch_name}.cuda.is_available() else {quote}cpu{quote}"
        )
        if isinstance(node, cst.Call):
            return node.with_changes(args=[node.args[0].with_changes(value=choice, comma=cst.MaybeSentinel.DEFAULT)])
        return choice


#: Libraries whose device arguments take a ``torch.device`` as well as a string: a device
#: already bound in scope may be given to them.
TORCH_DEVICE_LIBRARIES = frozenset(
    {
        "torch", "torchvision", "torchaudio", "torchtext", "transformers", "diffusers", "accelerate",
        "peft", "timm", "lightning", "pytorch_lightning", "lightning_fabric", "sentence_transformers",
        "torch_geometric", "dgl", "monai", "kornia", "speechbrain", "open_clip", "clip", "whisper",
        "fairseq", "torchmetrics", "ultralytics", "einops", "safetensors",
    }
)

#: Plain records: what they hold is data (a device named in a fake target, a config entry).
_RECORDS = ("types.SimpleNamespace", "argparse.Namespace", "collections.namedtuple")
_RECORD_NAMES = ("dict", "SimpleNamespace", "Namespace", "Mock", "MagicMock", "NonCallableMock")

#: pytest fixtures that fake the environment: a test taking them passes device strings as data.
_FAKING_FIXTURES = ("monkeypatch", "mocker")


def _name_of(func: cst.BaseExpression) -> str:
    return func.value if isinstance(func, cst.Name) else ""


def _only_looked_up(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
    """``node`` is a dictionary key, a subscript, a comparison operand or a string's content."""
    if parent is None:
        return False
    return any(child is node and looked_up for child, looked_up in _children_with_role(parent))


def _formatted_names(scope: cst.CSTNode) -> set[cst.Name]:
    """The names given alone to ``str()`` or ``repr()``: read as text, not used as a value."""
    return {
        node.args[0].value
        for node in walk(scope)
        if isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("str", "repr")
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
        and isinstance(node.args[0].value, cst.Name)
    }


def _children_with_role(node: cst.CSTNode) -> list[tuple[cst.CSTNode, bool]]:
    """The direct expression children of ``node``, each with whether it is only looked up
    there (a key, an index, compared, formatted) rather than used as a value. Assignment
    targets are left out."""
    if isinstance(node, cst.DictElement):
        return [(node.key, True), (node.value, False)]
    if isinstance(node, (cst.Comparison, cst.ComparisonTarget, cst.Index, cst.FormattedStringExpression)):
        return [(child, True) for child in node.children]
    if isinstance(node, cst.Arg) or isinstance(node, cst.Call):
        return [(child, False) for child in node.children]
    if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
        return [(node.value, False)] if node.value is not None else []
    if isinstance(node, cst.AssignTarget):
        return []
    return [(child, False) for child in node.children]


def _formatted_cuda_string(node: cst.BaseExpression) -> Optional[str]:
    """A CUDA device string built at run time, as the message shows it: ``f"cuda:{i}"``,
    ``"cuda:{}".format(i)``, ``"cuda:%d" % i``; None for anything else, and for a process's own
    device (``f"cuda:{local_rank}"``, `_mentions_rank`)."""
    filled: list[cst.BaseExpression]
    if isinstance(node, cst.FormattedString):
        first = node.parts[0] if node.parts else None
        if not (isinstance(first, cst.FormattedStringText) and first.value.startswith("cuda")):
            return None
        shown, filled = f"f{node.start[-1]}{first.value}...{node.end}", [node]
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "format":
        template = string_value(node.func.value)
        if template is None or not template.startswith("cuda"):
            return None
        shown, filled = f"{template!r}.format(...)", [arg.value for arg in node.args]
    elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        template = string_value(node.left)
        if template is None or not template.startswith("cuda"):
            return None
        shown, filled = f"{template!r} % ...", [node.right]
    else:
        return None
    return None if any(_mentions_rank(part) for part in filled) else shown


def _mentions_rank(expression: cst.BaseExpression) -> bool:
    """``f"cuda:{local_rank}"``, ``torch.device("cuda", rank)``: distributed training's per-process device."""
    names = [n.value for n in walk(expression) if isinstance(n, cst.Name)]
    names += [n.attr.value for n in walk(expression) if isinstance(n, cst.Attribute)]
    return any("rank" in name.lower() for name in names)


def _device_uses(
    body: cst.CSTNode, target: cst.Name, factory: Callable[[cst.Call], bool]
) -> Optional[list[tuple[cst.Call, cst.CSTNode]]]:
    """The ``factory`` calls given ``device=<target>`` in ``body``, each with its statement; None
    where ``target``'s name is read any other way, bound again or read in a nested function,
    class or lambda."""
    name = target.value
    not_reads: set[int] = {id(target)}
    uses: list[tuple[cst.Call, cst.CSTNode]] = []
    stack: list[tuple[cst.CSTNode, bool, cst.CSTNode]] = [(body, False, body)]
    while stack:
        node, nested, statement = stack.pop()
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            statement = node
        if isinstance(node, cst.Attribute):
            not_reads.add(id(node.attr))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            not_reads.add(id(node.name))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            not_reads.add(id(node.keyword))
        elif isinstance(node, cst.Call) and not nested and factory(node):
            for arg in node.args:
                keyword = arg.keyword
                if keyword is not None and keyword.value == "device" and isinstance(arg.value, cst.Name):
                    if arg.value.value == name:
                        uses.append((node, statement))
                        not_reads.add(id(arg.value))
        elif isinstance(node, cst.Name) and node.value == name and id(node) not in not_reads:
            return None
        inner = nested or isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))
        stack.extend((child, inner, statement) for child in reversed(list(iter_child_nodes(node))))
    return uses


def _statements_binding(body: cst.CSTNode, name: str) -> list[cst.CSTNode]:
    """The statements of ``body`` (not of nested functions or classes) that bind ``name``."""
    found: list[cst.CSTNode] = []
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(body, None)]
    while stack:
        node, statement = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            statement = node
        if statement is not None and any(
            isinstance(n, cst.Name) and n.value == name for t in bound_targets(node) for n in walk(t)
        ):
            found.append(statement)
        stack.extend((child, statement) for child in iter_child_nodes(node))
    return found
