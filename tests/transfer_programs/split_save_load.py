"""The tutorials' data and checkpoint idioms (data_tutorial, saveloadrun_tutorial): a Dataset
subclass, random_split with a seeded generator, DataLoader with a default_collate of (tensor,
int) samples, torch.save of a checkpoint dict (epoch, model and optimizer state_dict),
torch.load back into a fresh model and optimizer, and training that goes on the same."""

import io

import numpy as np


def program(torch, same):
    nn = torch.nn
    DataLoader, Dataset = torch.utils.data.DataLoader, torch.utils.data.Dataset
    random_split = torch.utils.data.random_split

    rng = np.random.default_rng(12)
    points = rng.standard_normal((30, 2)).astype(np.float32)

    class Blobs(Dataset):
        def __len__(self):
            return len(points)

        def __getitem__(self, idx):
            x = torch.tensor(points[idx])
            return x, int(x.sum() > 0)

    train, valid = random_split(Blobs(), [0.8, 0.2], generator=torch.Generator().manual_seed(42))
    loader = DataLoader(train, batch_size=5, shuffle=True,
                        generator=torch.Generator().manual_seed(0))
    model = same(nn.Linear(2, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    def epoch(model, optimizer):
        losses = []
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses

    first = epoch(model, optimizer)
    buffer = io.BytesIO()
    torch.save({"epoch": 1, "model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict()}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)
    restored = nn.Linear(2, 2)
    restored.load_state_dict(checkpoint["model_state_dict"])
    restored_opt = torch.optim.SGD(restored.parameters(), lr=0.5, momentum=0.9)
    restored_opt.load_state_dict(checkpoint["optimizer_state_dict"])
    second = epoch(restored, restored_opt)
    with torch.no_grad():
        valid_x = torch.stack([x for x, _ in valid])
        valid_y = torch.tensor([label for _, label in valid])
        accuracy = (restored(valid_x).argmax(1) == valid_y).float().mean()
    return {"valid_indices": valid.indices, "first": first, "second": second,
            "accuracy": accuracy, "epoch": checkpoint["epoch"], "weight": restored.weight}
