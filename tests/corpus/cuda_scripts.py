"""An older-style script: everything moved with .cuda()."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision import datasets, transforms


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.log_softmax(self.fc2(x), dim=1)


train_loader = torch.utils.data.DataLoader(
    datasets.MNIST("../data", train=True, download=True, transform=transforms.ToTensor()), batch_size=64, shuffle=True
)
model = Net()
model.cuda()  # ok: TDL004
criterion = nn.NLLLoss().cuda()
optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)

for batch_idx, (data, target) in enumerate(train_loader):
    data, target = data.cuda(), target.cuda()
    optimizer.zero_grad()
    output = model(data)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()

model.eval()
sample = torch.rand(1, 1, 28, 28)  # expect: TDL003  the model lives on the GPU
with torch.no_grad():
    print(model(sample).argmax(1))
    print(model(torch.rand(1, 1, 28, 28).cuda()).argmax(1))  # ok: TDL003
cls_weights = torch.tensor([1.0] * 10)  # ok: TDL003  the loss module holding it is moved
weighted = nn.NLLLoss(weight=cls_weights).cuda()
unmoved = nn.CrossEntropyLoss(weight=torch.tensor([2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]))  # expect: TDL003  the loss is never moved
with torch.no_grad():
    logits = model(torch.rand(4, 1, 28, 28).cuda())  # ok: TDL003
    print(unmoved(logits, torch.zeros(4, dtype=torch.long).cuda()))  # ok: TDL003
    print(weighted(logits, torch.zeros(4, dtype=torch.long).cuda()))  # ok: TDL003
