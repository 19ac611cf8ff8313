"""A plain training script: synthetic data, an MLP moved to the device, a quick probe."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class MLP(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Linear(d_hidden, n_classes))

    def forward(self, x):
        return self.net(x.flatten(1))


features = torch.randn(1024, 20)  # ok: TDL003
labels = torch.randint(0, 3, (1024,))  # ok: TDL003
loader = DataLoader(TensorDataset(features, labels), batch_size=64, shuffle=True)

model = MLP(20, 64, 3).to(device)
criterion = nn.CrossEntropyLoss()
criterion.to(device)  # ok: TDL004
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

for epoch in range(5):
    model.train()
    running = 0.0
    for inputs, targets in loader:
        inputs.to(device)  # expect: TDL004
        targets = targets.to(device)  # ok: TDL004
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        running += loss.item()
    print(f"epoch {epoch}: {running / len(loader):.3f}")

model.eval()
probe = torch.randn(8, 20)  # expect: TDL003  fed to the moved model
with torch.no_grad():
    print(model(probe).argmax(dim=1))
    print(model(torch.randn(8, 20, device=device)).argmax(dim=1))  # ok: TDL003
baseline = torch.zeros(8, 3)  # ok: TDL003  meets nothing on the device
print(F.softmax(baseline, dim=1))
torch.save(model.state_dict(), "mlp.pt")
