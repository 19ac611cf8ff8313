"""Model factories, shape probes before and after the move, modules converted in place."""

import torch
from torch import nn


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(conv_block(3, 32), nn.MaxPool2d(2), conv_block(32, 64), nn.MaxPool2d(2))
        with torch.no_grad():
            n_flat = self.features(torch.zeros(1, 3, 32, 32)).numel()  # ok: TDL003  __init__ runs on the CPU
        self.classifier = nn.Linear(n_flat, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class Backbone(nn.Module):
    def __init__(self, channels=(3, 16, 32)):
        super().__init__()
        self.body = nn.Sequential(*[conv_block(a, b) for a, b in zip(channels, channels[1:])])
        self.out_channels = self._infer_channels()

    def _infer_channels(self):
        probe = torch.zeros(1, 3, 64, 64)  # ok: TDL003  called from __init__ only
        return self.body(probe).shape[1]

    def forward(self, x):
        return self.body(x)


def build_model(name: str, num_classes: int) -> nn.Module:
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 256), nn.ReLU(), nn.Linear(256, num_classes))
    return SmallCNN(num_classes)


def output_shape(model: nn.Module):
    dummy = torch.randn(1, 3, 32, 32)  # ok: TDL003  the model's place is unknown here
    return model(dummy).shape


def freeze_bn(model: nn.Module):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
            m.float()  # ok: TDL004


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = build_model("cnn", 10)
out_shape = model(torch.zeros(2, 3, 32, 32)).shape  # ok: TDL003  model still on the CPU
model.to(device)  # ok: TDL004
model.float()  # ok: TDL004
model = model.to(memory_format=torch.channels_last)
example = torch.randn(2, 3, 32, 32)  # expect: TDL003
print(model(example).shape)
mlp = build_model("mlp", 10).cuda()
mlp.half()  # ok: TDL004
mlp(torch.randn(4, 3, 32, 32).cuda().half())  # ok: TDL003
mlp(torch.randn(4, 3, 32, 32, dtype=torch.float16))  # expect: TDL003
backbone = Backbone()
backbone.cuda()  # ok: TDL004
backbone.eval()
features = backbone(torch.ones(1, 3, 64, 64, device="cuda"))  # ok: TDL003
head = nn.Linear(32, 10)
head.to(device)  # ok: TDL004
head.weight.data.normal_(0, 0.01)
head.bias.data.zero_()
head.weight.data.cuda()  # expect: TDL004
logits = head(features.mean((2, 3)))
calibration = torch.linspace(0.9, 1.1, 10)  # expect: TDL003  scales the device logits
print(logits * calibration)
