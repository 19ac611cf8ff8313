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
