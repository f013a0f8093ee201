""""What is torch.nn really?" (pytorch/tutorials beginner_source/nn_tutorial.py) on random
28x28 images: weights = torch.randn(784, 10) / math.sqrt(784) made from numpy, then
requires_grad_(); log_softmax by hand (x - x.exp().sum(-1).log().unsqueeze(-1)), nll
-input[range(target.shape[0]), target].mean(), accuracy (preds == yb).float().mean(),
the update under torch.no_grad() with weights.grad.zero_(); then Mnist_Logistic with
nn.Parameter, fit() with an optim.SGD and get_data()'s two DataLoaders over TensorDatasets,
loss_batch returning len(xb), np.sum(np.multiply(losses, nums)) / np.sum(nums); and
Mnist_CNN / the Lambda-based nn.Sequential with xb.view(-1, 1, 28, 28), F.avg_pool2d and
nn.AdaptiveAvgPool2d(1), with momentum."""

import math

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    TensorDataset = torch.utils.data.TensorDataset
    DataLoader = torch.utils.data.DataLoader

    rng = np.random.default_rng(28)
    x_train = torch.tensor(rng.random((32, 784)), dtype=torch.float32)
    y_train = torch.tensor(rng.integers(0, 10, 32))
    x_valid = torch.tensor(rng.random((16, 784)), dtype=torch.float32)
    y_valid = torch.tensor(rng.integers(0, 10, 16))
    n, c = x_train.shape

    weights = torch.tensor(rng.standard_normal((784, 10)), dtype=torch.float32) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    bs, lr, epochs = 8, 0.5, 2
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    by_hand = (loss_func(model(x_train[:bs]), y_train[:bs]), accuracy(model(x_train[:bs]), y_train[:bs]))

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.zeros(784, 10))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    loss_func = F.cross_entropy

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    valid_losses = []

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(
                    *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
                )
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            valid_losses.append(val_loss)

    def get_data(train_ds, valid_ds, bs):
        return (
            DataLoader(train_ds, batch_size=bs, shuffle=False),
            DataLoader(valid_ds, batch_size=bs * 2),
        )

    train_ds = TensorDataset(x_train, y_train)
    valid_ds = TensorDataset(x_valid, y_valid)
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    logistic = Mnist_Logistic()
    fit(epochs, logistic, loss_func, torch.optim.SGD(logistic.parameters(), lr=lr), train_dl, valid_dl)

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, 28, 28)

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(4, 4, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    cnn = same(Mnist_CNN())
    fit(1, cnn, loss_func, torch.optim.SGD(cnn.parameters(), lr=0.1, momentum=0.9), train_dl, valid_dl)

    seq = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    same(seq)
    fit(1, seq, loss_func, torch.optim.SGD(seq.parameters(), lr=0.1, momentum=0.9), train_dl, valid_dl)
    return {"by_hand": list(by_hand), "weights": weights, "valid_losses": valid_losses,
            "logistic.bias": logistic.bias, "cnn.conv3.weight": cnn.conv3.weight,
            "seq.3.weight": seq[3].weight}
