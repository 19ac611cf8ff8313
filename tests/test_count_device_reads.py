"""scripts/count_untrusted_device_reads.py: the #12 check that safe fixes read `.device` only
from known tensors, over real code; here on the shapes that broke before."""
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "count_untrusted_device_reads.py"

SIZE_FIRST = (
    "import torch\nfrom torch import nn\n\n\nclass Decoder(nn.Module):\n"
    "    def forward(self, batch_size, encoded):\n"
    "        hidden = torch.zeros(1, batch_size, 4).cuda()\n"
    "        return encoded.unsqueeze(0) + hidden\n"
)
MAPPING_BATCH = (
    "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n"
    "    def forward(self, batch):\n"
    "        images = batch['images'].cuda(non_blocking=True)\n"
    "        return images * 2\n"
)


def test_safe_fixes_read_device_only_from_known_tensors(tmp_path):
    (tmp_path / "size_first.py").write_text(SIZE_FIRST)
    (tmp_path / "mapping_batch.py").write_text(MAPPING_BATCH)
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert "files a safe fix changes: 2" in out
    assert "not known to be a tensor: 0" in out


GRAPH_AND_LOOP = (
    "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def forward(self, g, h):\n"
    "        mask = torch.ones(g.num_nodes(), 1).cuda()\n        return h * mask\n\n\n"
    "def move_state(optimizer):\n    for param in optimizer.params:\n"
    "        state = optimizer.state[param].cuda(device=param.get_device())\n"
)


def test_the_judge_rejects_a_size_and_a_mapping():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import count_untrusted_device_reads as script
    finally:
        sys.path.pop(0)
    assert not script.known_tensor(SIZE_FIRST, 7, "batch_size")
    assert script.known_tensor(SIZE_FIRST, 7, "encoded")
    assert not script.known_tensor(MAPPING_BATCH, 7, "batch")
    assert script.known_tensor(GRAPH_AND_LOOP, 13, "param")  # a loop target whose get_device() is read
    assert not script.known_tensor(GRAPH_AND_LOOP, 7, "g")


def test_a_graph_is_never_read_as_device(tmp_path):
    (tmp_path / "graph_and_loop.py").write_text(GRAPH_AND_LOOP)
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert ".device reads the fixes add: 1" in out  # param.get_device() kept as param.device
    assert "not known to be a tensor: 0" in out


#: diffusers' llm_grounded_diffusion.py shape: a method gets ``loss`` from its one caller,
#: ``self.add_loss(loss, ...)``, which made it a device tensor; the binder seeds the parameter
#: from that call and reads ``loss.device``, and the judge follows the method call too.
METHOD_CALLER = (
    "import math\nimport torch\n\n\nclass Pipe:\n    def add_loss(self, loss, attn_map, count):\n"
    "        b, i, j = attn_map.shape\n        side = int(math.sqrt(i))\n        for index in range(count):\n"
    "            mask = torch.zeros(size=(side, side), device='cuda')\n"
    "            loss += (attn_map * mask.view(1, -1)).sum()\n        return loss\n\n"
    "    def compute(self, saved):\n        loss = torch.tensor(0).float().cuda()\n"
    "        return self.add_loss(loss, saved, 2)\n"
)


def test_the_judge_follows_a_method_call_on_self(tmp_path):
    (tmp_path / "method_caller.py").write_text(METHOD_CALLER)
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, check=True).stdout
    assert ".device reads the fixes add: 1" in out  # device=loss.device
    assert "not known to be a tensor: 0" in out
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import count_untrusted_device_reads as script
    finally:
        sys.path.pop(0)
    # The same method called with a number where ``loss`` is: no evidence of a tensor.
    assert not script.known_tensor(METHOD_CALLER.replace("self.add_loss(loss,", "self.add_loss(0.0,"), 10, "loss")
    # A bare call of the method's name is some other function, not this method.
    assert not script.known_tensor(METHOD_CALLER.replace("self.add_loss(loss,", "add_loss(loss,"), 10, "loss")


def test_jobs_print_what_a_serial_run_prints(tmp_path):
    """``-j 2`` judges files in worker processes, one file per task; the report (counts and the
    offending lines, in file order) is the serial run's."""
    for index, source in enumerate([SIZE_FIRST, MAPPING_BATCH, "x = 1\n", GRAPH_AND_LOOP, "def (\n", METHOD_CALLER]):
        (tmp_path / f"f{index}.py").write_text(source)
    serial, parallel = (
        subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), *jobs], capture_output=True, text=True, check=True).stdout
        for jobs in ([], ["-j", "2"])
    )
    assert parallel == serial
    assert "files: 6, files a safe fix changes: 4, .device reads the fixes add: 3" in serial
