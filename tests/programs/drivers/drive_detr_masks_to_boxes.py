"""Bounding boxes of two small binary masks, as DETR's panoptic post-processing computes them."""
import torch

from detr_masks_to_boxes import masks_to_boxes


def run():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    masks = torch.zeros(2, 5, 6)
    masks[0, 1:3, 2:5] = 1
    masks[1, 0:5, 0:1] = 1
    return masks_to_boxes(masks.to(device))
