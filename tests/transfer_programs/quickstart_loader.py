"""The PyTorch tutorials' quickstart (beginner_source/basics/quickstart_tutorial.py) on random
28x28 "images": TensorDataset + DataLoader(shuffle, a seeded generator), nn.Flatten + an MLP,
CrossEntropyLoss, SGD, the train loop and the test loop with torch.no_grad and argmax."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

    rng = np.random.default_rng(1)
    X = torch.tensor(rng.random((40, 1, 28, 28)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 10, 40))
    train_dataloader = DataLoader(TensorDataset(X[:30], y[:30]), batch_size=8, shuffle=True,
                                  generator=torch.Generator().manual_seed(3))
    test_dataloader = DataLoader(TensorDataset(X[30:], y[30:]), batch_size=8)

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    model = same(NeuralNetwork())
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    losses, accuracy = [], []
    for _ in range(2):
        model.train()
        for X_batch, y_batch in train_dataloader:
            loss = loss_fn(model(X_batch), y_batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(loss.item())
        model.eval()
        correct = 0
        with torch.no_grad():
            for X_batch, y_batch in test_dataloader:
                correct += (model(X_batch).argmax(1) == y_batch).type(torch.float).sum().item()
        accuracy.append(correct / 10)
    return {"losses": losses, "accuracy": accuracy, "last": model.linear_relu_stack[4].weight}
