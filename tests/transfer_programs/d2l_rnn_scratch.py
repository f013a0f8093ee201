"""d2l's RNN from scratch and its concise twin (chapter_recurrent-neural-networks/
rnn-scratch.md and rnn-concise.md, PyTorch tab): get_params with normal() by numpy,
init_rnn_state returning a tuple (torch.zeros((batch_size, num_hiddens)), ), rnn() looping
over `for X in inputs` with torch.mm and torch.tanh, torch.cat(outputs, dim=0),
F.one_hot(X.T.long(), vocab_size).type(torch.float32), grad_clipping over
[p for p in net.parameters() if p.requires_grad] with param.grad[:] *= theta / norm,
updater d2l.sgd (param -= lr * param.grad / batch_size; param.grad.zero_()),
predict_ch8's outputs.append(int(y.argmax(dim=1).reshape(1))) and
torch.tensor([outputs[-1]]).reshape((1, 1)); perplexity math.exp(l / n); then RNNModel over
nn.RNN with state.detach_() between batches and Y.T.reshape(-1)."""

import math

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    rng = np.random.default_rng(61)
    vocab_size, num_hiddens, batch_size, num_steps = 7, 6, 2, 4

    def normal(shape):
        return torch.tensor(rng.standard_normal(shape) * 0.01, dtype=torch.float32)

    def get_params(vocab_size, num_hiddens, device):
        num_inputs = num_outputs = vocab_size
        W_xh = normal((num_inputs, num_hiddens))
        W_hh = normal((num_hiddens, num_hiddens))
        b_h = torch.zeros(num_hiddens, device=device)
        W_hq = normal((num_hiddens, num_outputs))
        b_q = torch.zeros(num_outputs, device=device)
        params = [W_xh, W_hh, b_h, W_hq, b_q]
        for param in params:
            param.requires_grad_(True)
        return params

    def init_rnn_state(batch_size, num_hiddens, device):
        return (torch.zeros((batch_size, num_hiddens), device=device), )

    def rnn(inputs, state, params):
        W_xh, W_hh, b_h, W_hq, b_q = params
        H, = state
        outputs = []
        for X in inputs:
            H = torch.tanh(torch.mm(X, W_xh) + torch.mm(H, W_hh) + b_h)
            Y = torch.mm(H, W_hq) + b_q
            outputs.append(Y)
        return torch.cat(outputs, dim=0), (H,)

    class RNNModelScratch:
        def __init__(self, vocab_size, num_hiddens, device, get_params, init_state, forward_fn):
            self.vocab_size, self.num_hiddens = vocab_size, num_hiddens
            self.params = get_params(vocab_size, num_hiddens, device)
            self.init_state, self.forward_fn = init_state, forward_fn

        def __call__(self, X, state):
            X = F.one_hot(X.T, self.vocab_size).type(torch.float32)
            return self.forward_fn(X, state, self.params)

        def begin_state(self, batch_size, device):
            return self.init_state(batch_size, self.num_hiddens, device)

    def grad_clipping(net, theta):
        if isinstance(net, nn.Module):
            params = [p for p in net.parameters() if p.requires_grad]
        else:
            params = net.params
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > theta:
            for param in params:
                param.grad[:] *= theta / norm

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    def predict_ch8(prefix, num_preds, net, device):
        state = net.begin_state(batch_size=1, device=device)
        outputs = [prefix[0]]
        get_input = lambda: torch.tensor([outputs[-1]], device=device).reshape((1, 1))  # noqa: E731
        for y in prefix[1:]:
            _, state = net(get_input(), state)
            outputs.append(y)
        for _ in range(num_preds):
            y, state = net(get_input(), state)
            outputs.append(int(y.argmax(dim=1).reshape(1)))
        return outputs

    device = torch.device('cpu')
    corpus = rng.integers(0, vocab_size, 40)
    batches = [(torch.tensor(np.stack([corpus[i + j * 9:i + j * 9 + num_steps] for j in range(batch_size)])),
                torch.tensor(np.stack([corpus[i + 1 + j * 9:i + 1 + j * 9 + num_steps] for j in range(batch_size)])))
               for i in range(0, 8, num_steps)]

    def train_epoch_ch8(net, updater, use_random_iter=False):
        state = None
        total, n = 0.0, 0
        loss = nn.CrossEntropyLoss()
        for X, Y in batches:
            if state is None or use_random_iter:
                state = net.begin_state(batch_size=X.shape[0], device=device)
            else:
                if isinstance(net, nn.Module) and not isinstance(state, tuple):
                    state.detach_()
                else:
                    for s in state:
                        s.detach_()
            y = Y.T.reshape(-1)
            X, y = X.to(device), y.to(device)
            y_hat, state = net(X, state)
            l = loss(y_hat, y.long()).mean()
            if isinstance(updater, torch.optim.Optimizer):
                updater.zero_grad()
                l.backward()
                grad_clipping(net, 1)
                updater.step()
            else:
                l.backward()
                grad_clipping(net, 1)
                updater(batch_size=1)
            total += l.item() * y.numel()
            n += y.numel()
        return math.exp(total / n)

    net = RNNModelScratch(vocab_size, num_hiddens, device, get_params, init_rnn_state, rnn)
    state = net.begin_state(batch_size, device)
    Y, new_state = net(batches[0][0], state)
    shapes = [list(Y.shape), len(new_state), list(new_state[0].shape)]
    ppl = [train_epoch_ch8(net, lambda batch_size: sgd(net.params, 1.0, batch_size))
           for _ in range(3)]
    prediction = predict_ch8([1, 2], 5, net, device)

    class RNNModel(nn.Module):
        def __init__(self, rnn_layer, vocab_size, **kwargs):
            super(RNNModel, self).__init__(**kwargs)
            self.rnn = rnn_layer
            self.vocab_size = vocab_size
            self.num_hiddens = self.rnn.hidden_size
            self.num_directions = 1
            self.linear = nn.Linear(self.num_hiddens, self.vocab_size)

        def forward(self, inputs, state):
            X = F.one_hot(inputs.T.long(), self.vocab_size)
            X = X.to(torch.float32)
            Y, state = self.rnn(X, state)
            output = self.linear(Y.reshape((-1, Y.shape[-1])))
            return output, state

        def begin_state(self, device, batch_size=1):
            return torch.zeros((self.num_directions * self.rnn.num_layers,
                                batch_size, self.num_hiddens), device=device)

    concise = same(RNNModel(nn.RNN(vocab_size, num_hiddens), vocab_size=vocab_size).to(device))
    updater = torch.optim.SGD(concise.parameters(), 1.0)
    concise_ppl = [train_epoch_ch8(concise, updater) for _ in range(3)]
    return {"shapes": [str(s) for s in shapes], "ppl": ppl, "prediction": prediction, "W_hq": net.params[3],
            "concise_ppl": concise_ppl, "concise_prediction": predict_ch8([3], 4, concise, device),
            "rnn.weight_hh_l0": concise.rnn.weight_hh_l0}
