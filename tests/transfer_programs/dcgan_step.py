"""The DCGAN tutorial (beginner_source/dcgan_faces_tutorial.py) at toy size: a generator of
ConvTranspose2d + BatchNorm2d + ReLU + Tanh, a discriminator of Conv2d + LeakyReLU +
Sigmoid, weights_init through apply (normal_ with mean and std), BCELoss, Adam with
betas=(0.5, 0.999), one step of each."""

import numpy as np


def program(torch, same):
    nn = torch.nn

    nz, ngf, ndf = 4, 3, 3

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(
        nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    netG.apply(weights_init)  # numbers differ between libraries: same() makes them equal
    netD.apply(weights_init)
    same(netG)
    same(netD)
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    rng = np.random.default_rng(9)
    real = torch.tensor(rng.uniform(-1, 1, (2, 1, 8, 8)), dtype=torch.float32)
    noise = torch.tensor(rng.standard_normal((2, nz, 1, 1)), dtype=torch.float32)
    netD.zero_grad()
    label = torch.full((2,), 1.0, dtype=torch.float)
    errD_real = criterion(netD(real).view(-1), label)
    errD_real.backward()
    fake = netG(noise)
    label.fill_(0.0)
    errD_fake = criterion(netD(fake.detach()).view(-1), label)
    errD_fake.backward()
    optimizerD.step()
    netG.zero_grad()
    label.fill_(1.0)
    errG = criterion(netD(fake).view(-1), label)
    errG.backward()
    optimizerG.step()
    return {"fake": fake, "errD": (errD_real + errD_fake).item(), "errG": errG.item(),
            "G0": netG[0].weight, "G0.grad": netG[0].weight.grad}
