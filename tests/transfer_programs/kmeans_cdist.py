"""k-means in a few lines of tensor code (a common notebook exercise): distances with
torch.cdist, assignments with argmin, cluster sizes with bincount, new centres with index_add_."""

import numpy as np


def program(torch, same):
    rng = np.random.default_rng(3)
    blobs = np.concatenate([rng.normal(c, 0.3, (20, 2)) for c in ((0, 0), (3, 3), (0, 4))])
    points = torch.tensor(blobs, dtype=torch.float32)
    centres = points[torch.tensor([0, 25, 50])].clone()
    history = []
    for _ in range(5):
        distances = torch.cdist(points, centres)
        assignment = distances.argmin(dim=1)
        counts = torch.bincount(assignment, minlength=3)
        sums = torch.zeros_like(centres).index_add_(0, assignment, points)
        centres = sums / counts.clamp(min=1).unsqueeze(1).to(points.dtype)
        history.append(distances.min(dim=1).values.pow(2).sum().item())
    # how far each point is from the others of its cluster, differentiably
    x = points.clone().requires_grad_()
    spread = torch.cdist(x, centres, p=1).min(dim=1).values.mean()
    spread.backward()
    return {"history": history, "centres": centres, "counts": counts, "grad": x.grad,
            "pdist": torch.nn.functional.pdist(points[:6])}
