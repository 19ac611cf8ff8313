"""VAE and diffusion models: reparameterisation, sampling, timesteps."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class VAE(nn.Module):
    def __init__(self, d_in=784, d_hidden=400, latent_dim=20):
        super().__init__()
        self.latent_dim = latent_dim
        self.enc = nn.Linear(d_in, d_hidden)
        self.fc_mu = nn.Linear(d_hidden, latent_dim)
        self.fc_var = nn.Linear(d_hidden, latent_dim)
        self.dec = nn.Sequential(nn.Linear(latent_dim, d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_in), nn.Sigmoid())

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn(std.size())  # expect: TDL003  multiplies the device std
        return mu + eps * std

    def forward(self, x):
        h = F.relu(self.enc(x.view(-1, 784)))
        mu, logvar = self.fc_mu(h), self.fc_var(h)
        z = self.reparameterize(mu, logvar)
        return self.dec(z), mu, logvar

    def sample(self, num_samples, device):
        z = torch.randn(num_samples, self.latent_dim, device=device)  # ok: TDL003
        return self.dec(z)


class ConditionalVAE(VAE):
    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)  # ok: TDL003
        return mu + eps * std

    def one_hot(self, labels, num_classes):
        return F.one_hot(labels, num_classes).float()


def vae_loss(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def cosine_beta_schedule(timesteps, s=0.008):
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps, dtype=torch.float64)  # ok: TDL003
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.999)


class GaussianDiffusion(nn.Module):
    def __init__(self, denoiser, timesteps=1000):
        super().__init__()
        self.denoiser = denoiser
        self.num_timesteps = timesteps
        betas = cosine_beta_schedule(timesteps).float()
        alphas = 1.0 - betas
        self.register_buffer("betas", betas)
        self.register_buffer("alphas_cumprod", torch.cumprod(alphas, dim=0))

    def q_sample(self, x0, t, noise):
        a = self.alphas_cumprod[t].view(-1, 1, 1, 1)
        return a.sqrt() * x0 + (1 - a).sqrt() * noise

    def forward(self, x0):
        b = x0.size(0)
        t = torch.randint(0, self.num_timesteps, (b,), device=x0.device).long()  # ok: TDL003
        noise = torch.randn_like(x0)  # ok: TDL003
        x_t = self.q_sample(x0, t, noise)
        return F.mse_loss(self.denoiser(x_t, t), noise)

    @torch.no_grad()
    def sample(self, shape, device):
        x = torch.randn(shape, device=device)  # ok: TDL003
        for i in reversed(range(self.num_timesteps)):
            t = torch.full((shape[0],), i, device=device, dtype=torch.long)  # ok: TDL003
            eps = self.denoiser(x, t)
            beta = self.betas[i]
            x = (x - beta / (1 - self.alphas_cumprod[i]).sqrt() * eps) / (1 - beta).sqrt()
            if i > 0:
                x = x + beta.sqrt() * torch.randn_like(x)  # ok: TDL003
        return x


class NoiseLevelEmbedding(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim
        self.proj = nn.Linear(dim, dim)

    def forward(self, sigma):
        half = self.dim // 2
        freqs = torch.exp(torch.arange(half, dtype=torch.float32) * (-math.log(10000.0) / half))  # expect: TDL003
        angles = sigma.view(-1, 1) * freqs.view(1, -1)
        return self.proj(torch.cat([angles.sin(), angles.cos()], dim=-1))


class LatentInterpolation(nn.Module):
    def __init__(self, decoder: nn.Module):
        super().__init__()
        self.decoder = decoder

    def forward(self, z_a, z_b):
        steps = torch.linspace(0, 1, 8)  # expect: TDL003  mixes the device latents
        zs = z_a.unsqueeze(0) * (1 - steps.view(-1, 1, 1)) + z_b.unsqueeze(0) * steps.view(-1, 1, 1)
        return self.decoder(zs.flatten(0, 1))
