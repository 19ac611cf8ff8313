"""One step of NeMo's CLIP data pipeline over a tiny batch (with an entry left None)."""
import torch

from nemo_clip_data_step import clip_data_step


def run():
    torch.manual_seed(0)
    batch = {"images": torch.rand(2, 3, 4, 4), "captions": torch.randint(0, 9, (2, 1, 5)), "extra": None}
    step = clip_data_step(iter([batch]))
    return [step["images"].mean(), step["captions"], step["extra"]]
