"""pytorch/examples mnist/main.py at toy size: Conv2d, F.relu, F.max_pool2d, Dropout
(off: the model is in eval mode for the comparison), torch.flatten, F.log_softmax +
F.nll_loss, Adadelta and StepLR(gamma=0.7) per epoch, the test loop with reduction="sum"
and pred.eq(target.view_as(pred))."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    StepLR = torch.optim.lr_scheduler.StepLR

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.fc1 = nn.Linear(8 * 2 * 2, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    model = same(Net())
    model.eval()  # dropout would draw different numbers in each library
    rng = np.random.default_rng(11)
    data = torch.tensor(rng.random((12, 1, 8, 8)), dtype=torch.float32)
    target = torch.tensor(rng.integers(0, 10, 12))
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    losses, correct = [], []
    for _ in range(3):
        for xb, yb in zip(data.split(6), target.split(6)):
            optimizer.zero_grad()
            loss = F.nll_loss(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        with torch.no_grad():
            output = model(data)
            test_loss = F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct.append([test_loss, pred.eq(target.view_as(pred)).sum().item()])
    return {"losses": losses, "test": correct, "lr": scheduler.get_last_lr()}
