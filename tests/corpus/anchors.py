"""Anchor and grid generators for detection heads."""

import torch
from torch import nn


class AnchorGenerator(nn.Module):
    def __init__(self, sizes=(32, 64, 128), aspect_ratios=(0.5, 1.0, 2.0), strides=(8, 16, 32)):
        super().__init__()
        self.strides = strides
        self.cell_anchors = [self.generate_cell_anchors(s, aspect_ratios) for s in sizes]

    @staticmethod
    def generate_cell_anchors(size, aspect_ratios):
        ratios = torch.as_tensor(aspect_ratios, dtype=torch.float32)  # ok: TDL003
        h_ratios = torch.sqrt(ratios)
        w_ratios = 1 / h_ratios
        ws = (w_ratios * size).view(-1)
        hs = (h_ratios * size).view(-1)
        return (torch.stack([-ws, -hs, ws, hs], dim=1) / 2).round()

    def grid_anchors(self, grid_sizes, device):
        anchors = []
        for (gh, gw), stride, base in zip(grid_sizes, self.strides, self.cell_anchors):
            shifts_x = torch.arange(0, gw, dtype=torch.float32, device=device) * stride  # ok: TDL003
            shifts_y = torch.arange(0, gh, dtype=torch.float32, device=device) * stride  # ok: TDL003
            shift_y, shift_x = torch.meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x = shift_x.reshape(-1)
            shift_y = shift_y.reshape(-1)
            shifts = torch.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.view(-1, 1, 4) + base.to(device).view(1, -1, 4)).reshape(-1, 4))
        return anchors

    def forward(self, images, feature_maps):
        grid_sizes = [fm.shape[-2:] for fm in feature_maps]
        return self.grid_anchors(grid_sizes, images.device)


class DetectHead(nn.Module):
    """YOLO-style head whose grid is built on the CPU at every call."""

    def __init__(self, num_classes, anchors, channels):
        super().__init__()
        self.na = len(anchors[0]) // 2
        self.no = num_classes + 5
        self.register_buffer("anchor_grid", torch.tensor(anchors).float().view(len(anchors), 1, -1, 1, 1, 2))  # ok: TDL003
        self.stride = torch.tensor([8.0, 16.0, 32.0])  # ok: TDL003  only ever indexed down to 0-dim scalars
        self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in channels)

    @staticmethod
    def make_grid(nx, ny):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")  # expect: TDL003  added to the head's output
        return torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()

    def forward(self, xs):
        outputs = []
        for i, x in enumerate(xs):
            p = self.m[i](x)
            bs, _, ny, nx = p.shape
            p = p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            grid = self.make_grid(nx, ny)
            y = p.sigmoid()
            xy = (y[..., 0:2] * 2.0 - 0.5 + grid) * self.stride[i]
            wh = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]
            outputs.append(torch.cat((xy, wh, y[..., 4:]), -1).view(bs, -1, self.no))
        return torch.cat(outputs, 1)


class DetectHeadMoved(DetectHead):
    """The same head, grid moved next to the prediction."""

    def forward(self, xs):
        outputs = []
        for i, x in enumerate(xs):
            p = self.m[i](x)
            bs, _, ny, nx = p.shape
            grid = self.make_grid(nx, ny).to(p.device)
            offsets = torch.tensor([0.5, 0.5]).to(p.device)  # ok: TDL003
            y = p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).sigmoid()
            outputs.append((y[..., 0:2] + grid - offsets).view(bs, -1, 2))
        return torch.cat(outputs, 1)


class CenterPriors(nn.Module):
    """FCOS-style points: one location per feature-map cell."""

    def __init__(self, strides=(8, 16, 32)):
        super().__init__()
        self.strides = strides
        self.reg = nn.Conv2d(256, 4, 3, padding=1)

    def forward(self, feats):
        boxes = []
        for feat, stride in zip(feats, self.strides):
            h, w = feat.shape[-2:]
            xs = torch.arange(w, dtype=torch.float32) * stride + stride // 2  # expect: TDL003  meets the regression output
            ys = torch.arange(h, dtype=torch.float32) * stride + stride // 2  # expect: TDL003
            cy, cx = torch.meshgrid(ys, xs, indexing="ij")
            points = torch.stack((cx.reshape(-1), cy.reshape(-1)), dim=-1)
            ltrb = self.reg(feat).flatten(2).transpose(1, 2)
            boxes.append(torch.cat((points - ltrb[..., :2], points + ltrb[..., 2:]), dim=-1))
        return boxes


def box_iou_matrix(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area1[:, None] + area2 - inter)


def encode_boxes(gt: torch.Tensor, anchors: torch.Tensor, weights=(10.0, 10.0, 5.0, 5.0)):
    w = torch.tensor(weights, dtype=gt.dtype)  # ok: TDL003  gt and anchors of unknown place
    deltas = torch.stack(
        [(gt[:, 0] - anchors[:, 0]) / anchors[:, 2], (gt[:, 1] - anchors[:, 1]) / anchors[:, 3]], dim=1
    )
    return deltas * w[:2]
