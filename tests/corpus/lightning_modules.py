"""Lightning modules: Lightning moves the module and the batch; factories must follow."""

import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch import nn


class Generator(nn.Module):
    def __init__(self, latent_dim, img_shape=(1, 28, 28)):
        super().__init__()
        self.img_shape = img_shape
        self.model = nn.Sequential(nn.Linear(latent_dim, 256), nn.LeakyReLU(0.2), nn.Linear(256, 784), nn.Tanh())

    def forward(self, z):
        return self.model(z).view(z.size(0), *self.img_shape)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.LeakyReLU(0.2), nn.Linear(256, 1), nn.Sigmoid())

    def forward(self, img):
        return self.model(img)


class GAN(pl.LightningModule):
    def __init__(self, latent_dim=100, lr=2e-4):
        super().__init__()
        self.save_hyperparameters()
        self.generator = Generator(latent_dim)
        self.discriminator = Discriminator()
        self.validation_z = torch.randn(8, latent_dim)  # ok: TDL003  moved with type_as where used
        self.automatic_optimization = False

    def forward(self, z):
        return self.generator(z)

    def training_step(self, batch, batch_idx):
        imgs, _ = batch
        opt_g, opt_d = self.optimizers()
        z = torch.randn(imgs.shape[0], self.hparams.latent_dim)  # ok: TDL003
        z = z.type_as(imgs)
        fake = self(z)
        valid = torch.ones(imgs.size(0), 1)  # ok: TDL003
        valid = valid.type_as(imgs)
        g_loss = F.binary_cross_entropy(self.discriminator(fake), valid)
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()
        real_loss = F.binary_cross_entropy(self.discriminator(imgs), valid)
        fake_labels = torch.zeros(imgs.size(0), 1)  # expect: TDL003  meets the discriminator's output
        fake_loss = F.binary_cross_entropy(self.discriminator(fake.detach()), fake_labels)
        d_loss = (real_loss + fake_loss) / 2
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()
        self.log_dict({"g_loss": g_loss, "d_loss": d_loss})

    def on_validation_epoch_end(self):
        z = self.validation_z.type_as(self.generator.model[0].weight)
        return self(z)

    def configure_optimizers(self):
        lr = self.hparams.lr
        return [
            torch.optim.Adam(self.generator.parameters(), lr=lr, betas=(0.5, 0.999)),
            torch.optim.Adam(self.discriminator.parameters(), lr=lr, betas=(0.5, 0.999)),
        ]


class LitClassifier(pl.LightningModule):
    def __init__(self, num_classes=10, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing
        self.backbone = nn.Sequential(nn.Conv2d(3, 32, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(32, num_classes)
        self.register_buffer("class_weights", torch.ones(num_classes))  # ok: TDL003

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.head(self.backbone(x))
        loss = F.cross_entropy(logits, y, weight=self.class_weights)
        uniform = torch.full((logits.size(0), logits.size(1)), 1.0 / logits.size(1))  # expect: TDL003
        smooth = -(uniform * F.log_softmax(logits, dim=-1)).sum(-1).mean()
        self.log("train_loss", loss)
        return (1 - self.smoothing) * loss + self.smoothing * smooth

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        acc = (logits.argmax(1) == y).float().mean()
        self.log("val_acc", acc)
        self.log("val_zero", torch.tensor(0.0))  # ok: TDL003
        bonus = torch.zeros(logits.size(0), device=self.device)  # ok: TDL003
        return logits + bonus[:, None]

    def predict_step(self, batch, batch_idx):
        x, _ = batch
        noise = torch.randn_like(x) * 0.01  # ok: TDL003
        return self(x + noise).softmax(-1)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class LitWeightedClassifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(16, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        weight = torch.tensor([1.0, 5.0])  # expect: TDL003  class weights for device logits
        return F.cross_entropy(logits, y, weight=weight)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        threshold = torch.tensor(0.5)  # ok: TDL003  0-dim
        preds = logits.softmax(-1)[:, 1] > threshold
        self.log("val_pos_rate", preds.float().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
