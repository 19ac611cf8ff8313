from __future__ import annotations

import libcst as cst

from torchdevice_lint.analysis import torch_api
from torchdevice_lint.analysis.guards import in_test_code
from torchdevice_lint.rule import Invalid, Rule


class DataParallel(Rule):
    """
    ## What it does
    Flags `nn.DataParallel(...)` (under any of its names) and the functional
    `nn.parallel.data_parallel(...)`. Test code and code that implements data-parallel support
    itself (a class or function named for it, such as a `DataParallelStrategy`) are left
    alone; so are `isinstance(model, nn.DataParallel)` checks and unwrapping `model.module`.

    ## Why is this bad?
    PyTorch recommends `DistributedDataParallel` instead, "even if there is only a single
    node". `DataParallel` runs one Python thread per GPU: it replicates the module on every
    forward, scatters the inputs from and gathers the outputs onto `device_ids[0]` (which fills
    that GPU's memory first), requires the parameters to sit on `device_ids[0]` (`RuntimeError:
    module must have its parameters and buffers on device cuda:0 (device_ids[0])`), does not
    keep buffers of the replicas in sync, and scales poorly because of the GIL.

    ## Example
    ```python
    model = nn.DataParallel(model).cuda()
    ```

    ## Use instead
    ```python
    # launched with: torchrun --nproc-per-node=NUM_GPUS train.py
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    model = nn.parallel.DistributedDataParallel(model.to(device), device_ids=[local_rank])
    ```

    ## Fix safety
    No fix: moving to `DistributedDataParallel` changes how the program is launched (one
    process per GPU), how data is split (`DistributedSampler`) and how checkpoints are written
    (on one rank).
    """

    code = "TDL011"
    name = "data-parallel"
    message = "`{name}` is single-process multi-GPU; use `DistributedDataParallel` (one process per GPU)"
    needles = ("DataParallel", "data_parallel")

    valid = (
        "import torch\nmodel = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])\n",
        "import torch\nif isinstance(model, torch.nn.DataParallel):\n    model = model.module\n",
        "from torch import nn\nwrapped = (nn.DataParallel, nn.parallel.DistributedDataParallel)\n",
        "import pytest\nfrom torch import nn\n\ndef test_unwrap():\n    assert unwrap(nn.DataParallel(nn.Linear(2, 2)))\n",
        "from torch import nn\n\nclass DataParallelStrategy:\n    def setup_module(self, module):\n"
        "        return nn.DataParallel(module, device_ids=self.parallel_devices)\n",
        "from torch_geometric.nn import DataParallel\nmodel = DataParallel(model)\n",
        "from torch import nn\n\nclass DataParallel(nn.DataParallel):\n    pass\n",
    )
    invalid = (
        Invalid("import torch\nmodel = torch.nn.DataParallel(model).cuda()\n"),
        Invalid("from torch import nn\nnet = nn.DataParallel(net, device_ids=[0, 1])\n"),
        Invalid("from torch.nn.parallel import DataParallel\nmodel = DataParallel(model)\n"),
        Invalid(
            "import torch.nn as nn\n\nclass Generator(nn.Module):\n    def forward(self, x):\n"
            "        if x.is_cuda and self.ngpu > 1:\n"
            "            return nn.parallel.data_parallel(self.main, x, range(self.ngpu))\n"
            "        return self.main(x)\n"
        ),
        Invalid(
            "import torch\nif torch.cuda.device_count() > 1:\n    model = torch.nn.parallel.DataParallel(model)\n"
            "    critic = torch.nn.DataParallel(critic)\n",
            count=2,
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.analysis.qualified_name(node.func)
        if qualified not in torch_api.DATA_PARALLEL:
            return
        if in_test_code(self.analysis.imports, self.context.ancestors) or self._implements_data_parallel():
            return
        self.report(node, self.message.format(name=self.analysis.module.code_for_node(node.func)))

    def _implements_data_parallel(self) -> bool:
        for node in self.context.ancestors:
            if isinstance(node, (cst.ClassDef, cst.FunctionDef)):
                name = node.name.value.lower().replace("_", "")
                if "dataparallel" in name or name.startswith("dp") or name.endswith("dp"):
                    return True
        return False
