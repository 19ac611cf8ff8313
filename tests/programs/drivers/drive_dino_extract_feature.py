"""DINO's per-frame features from a tiny ViT-like stand-in with the same interface
(``get_intermediate_layers`` and ``patch_embed.patch_size``), as in video segmentation."""
import torch
from torch import nn

from dino_extract_feature import extract_feature


class PatchEmbed(nn.Module):
    def __init__(self, patch_size, dim):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Conv2d(3, dim, patch_size, stride=patch_size)


class TinyViT(nn.Module):
    def __init__(self, patch_size=2, dim=4):
        super().__init__()
        self.patch_embed = PatchEmbed(patch_size, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))

    def get_intermediate_layers(self, x, n=1):
        tokens = self.patch_embed.proj(x).flatten(2).transpose(1, 2)
        return [torch.cat([self.cls_token.expand(x.shape[0], -1, -1), tokens], dim=1)] * n


def run():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = TinyViT().to(device).eval()
    frame = torch.rand(3, 4, 6)
    with torch.no_grad():
        features, h, w = extract_feature(model, frame, return_h_w=True)
    return [features, h, w]
