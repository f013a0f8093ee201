"""pytorch/examples time_sequence_prediction/train.py at toy size: a Sequence of two
nn.LSTMCell layers in float64 (model.double(), torch.zeros(..., dtype=torch.double)),
input.split(1, dim=1), torch.cat(outputs, dim=1), a future horizon fed back from the output,
and optim.LBFGS(seq.parameters(), lr=0.8) with a closure; the sine-wave data built as in
generate_sine_wave.py with numpy."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    optim = torch.optim

    class Sequence(nn.Module):
        def __init__(self):
            super(Sequence, self).__init__()
            self.lstm1 = nn.LSTMCell(1, 12)
            self.lstm2 = nn.LSTMCell(12, 12)
            self.linear = nn.Linear(12, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), 12, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 12, dtype=torch.double)
            h_t2 = torch.zeros(input.size(0), 12, dtype=torch.double)
            c_t2 = torch.zeros(input.size(0), 12, dtype=torch.double)

            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for i in range(future):
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            outputs = torch.cat(outputs, dim=1)
            return outputs

    np.random.seed(2)
    T, L, N = 20, 30, 6
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    data = np.sin(x / 1.0 / T).astype('float64')
    input = torch.from_numpy(data[2:, :-1])
    target = torch.from_numpy(data[2:, 1:])
    test_input = torch.from_numpy(data[:2, :-1])
    test_target = torch.from_numpy(data[:2, 1:])
    seq = Sequence()
    seq.double()
    same(seq)
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    losses = []
    for i in range(2):
        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            future = 5
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            y = pred.detach().numpy()
    return {"losses": losses, "test_loss": loss, "pred": y, "linear.weight": seq.linear.weight}
