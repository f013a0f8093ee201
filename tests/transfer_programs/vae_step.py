"""pytorch/examples vae/main.py at toy size: the VAE of fc1, fc21, fc22, fc3, fc4 with
F.relu, torch.sigmoid, encode/decode, reparameterize (torch.exp(0.5*logvar),
torch.randn_like(std), eps.mul(std).add_(mu)), x.view(-1, 784) and loss_function's
F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum') plus
-0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()); Adam(lr=1e-3); the test loop's
torch.cat([data[:n], recon_batch.view(...)[:n]]) and sampling from torch.randn(64, 20).
The draws of randn_like differ between the libraries, so what depends on them is compared
by shape, and the rest (the KL term, the encoder's gradient of it) by value."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim

    class VAE(nn.Module):
        def __init__(self):
            super(VAE, self).__init__()
            self.fc1 = nn.Linear(784, 40)
            self.fc21 = nn.Linear(40, 20)
            self.fc22 = nn.Linear(40, 20)
            self.fc3 = nn.Linear(20, 40)
            self.fc4 = nn.Linear(40, 784)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std)
            return mu + eps * std

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 784))
            z = self.reparameterize(mu, logvar)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD

    device = torch.device("cpu")
    model = same(VAE().to(device))
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(44)
    data = torch.tensor(rng.random((6, 1, 28, 28)), dtype=torch.float32)

    model.train()
    mu, logvar = model.encode(data.view(-1, 784))
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    KLD.backward()
    kl_grad = model.fc21.weight.grad.clone()
    optimizer.zero_grad()

    train_loss = 0
    data = data.to(device)
    optimizer.zero_grad()
    recon_batch, mu, logvar = model(data)
    loss = loss_function(recon_batch, data, mu, logvar)
    loss.backward()
    train_loss += loss.item()
    optimizer.step()

    model.eval()
    with torch.no_grad():
        recon_batch, mu, logvar = model(data)
        n = min(data.size(0), 8)
        comparison = torch.cat([data[:n], recon_batch.view(6, 1, 28, 28)[:n]])
        sample = torch.randn(64, 20).to(device)
        sample = model.decode(sample).cpu()
    return {"KLD": KLD, "kl_grad": kl_grad, "mu_after": list(mu.shape),
            "loss_finite": bool(np.isfinite(train_loss)), "comparison": list(comparison.shape),
            "sample": list(sample.view(64, 1, 28, 28).shape)}
