"""Fit a small linear regression on synthetic data. Runs on the host only."""

import torch
from torch import nn

torch.manual_seed(0)
true_w = torch.tensor([[2.0], [-3.4]])  # ok: TDL003
true_b = torch.tensor([4.2])  # ok: TDL003
X = torch.randn(1000, 2)  # ok: TDL003
y = X @ true_w + true_b + 0.01 * torch.randn(1000, 1)  # ok: TDL003
net = nn.Linear(2, 1)
nn.init.normal_(net.weight, std=0.01)
opt = torch.optim.SGD(net.parameters(), lr=0.03)

for epoch in range(3):
    for idx in torch.randperm(1000).split(10):  # ok: TDL003
        loss = nn.functional.mse_loss(net(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(epoch, loss.item())

grid = torch.linspace(-1, 1, 50).unsqueeze(1).repeat(1, 2)  # ok: TDL003
with torch.no_grad():
    preds = net(grid)
    offset = torch.zeros(50, 1)  # ok: TDL003
    print((preds + offset).mean())


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        bias = torch.ones(x.size(0), 8)  # ok: TDL003  a host-only script, nothing leaves the host
        return self.out(torch.relu(self.hidden(x) + bias))


tiny = TinyNet()
print(tiny(torch.randn(4, 2)))  # ok: TDL003
X.double()  # expect: TDL004  a no-op wherever it runs
