"""Two training windows drawn from a byte sequence, as x-transformers' enwik8 scripts do."""
import torch

from x_transformers_text_sampler import TextSamplerDataset


def run():
    torch.manual_seed(0)
    data = torch.randint(0, 256, (64,), dtype=torch.uint8)
    dataset = TextSamplerDataset(data, seq_len=8)
    return [dataset[0], dataset[1], len(dataset)]
