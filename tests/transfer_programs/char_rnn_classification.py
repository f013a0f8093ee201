"""Classifying names with a character-level RNN (pytorch/tutorials intermediate_source/
char_rnn_classification_tutorial.py, the edition with its own RNN cell): unicodeToAscii with
unicodedata, letterToIndex, lineToTensor's one-hot torch.zeros(len(line), 1, n_letters)
filled with tensor[li][0][letterToIndex(letter)] = 1, the RNN of i2h and i2o over
torch.cat((input, hidden), 1) with nn.LogSoftmax(dim=1), initHidden, nn.NLLLoss, the
hand-made update p.data.add_(p.grad.data, alpha=-learning_rate), categoryFromOutput's
output.topk(1) and top_i[0].item(), and predict's output.topk(n_predictions, 1, True)."""

import string
import unicodedata

import numpy as np


def program(torch, same):
    nn = torch.nn
    all_letters = string.ascii_letters + " .,;'"
    n_letters = len(all_letters)

    def unicodeToAscii(s):
        return ''.join(
            c for c in unicodedata.normalize('NFD', s)
            if unicodedata.category(c) != 'Mn'
            and c in all_letters
        )

    category_lines = {
        "Czech": [unicodeToAscii(n) for n in ["Ślusàrski", "Novák", "Dvořák"]],
        "Irish": ["O'Neal", "Murphy", "Kelly"],
        "Japanese": ["Abe", "Sato", "Ito"],
    }
    all_categories = list(category_lines)
    n_categories = len(all_categories)

    def letterToIndex(letter):
        return all_letters.find(letter)

    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(input_size + hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = torch.cat((input, hidden), 1)
            hidden = self.i2h(combined)
            output = self.i2o(combined)
            output = self.softmax(output)
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size)

    n_hidden = 16
    rnn = same(RNN(n_letters, n_hidden, n_categories))

    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return all_categories[category_i], category_i

    criterion = nn.NLLLoss()
    learning_rate = 0.005

    def train(category_tensor, line_tensor):
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item()

    rng = np.random.default_rng(3)
    losses, guesses = [], []
    for _ in range(12):
        category = all_categories[int(rng.integers(0, n_categories))]
        line = category_lines[category][int(rng.integers(0, 3))]
        category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
        line_tensor = lineToTensor(line)
        output, loss = train(category_tensor, line_tensor)
        guesses.append(categoryFromOutput(output)[0])
        losses.append(loss)

    def evaluate(line_tensor):
        hidden = rnn.initHidden()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        return output

    confusion = torch.zeros(n_categories, n_categories)
    for category in all_categories:
        for line in category_lines[category]:
            output = evaluate(lineToTensor(line))
            guess, guess_i = categoryFromOutput(output)
            category_i = all_categories.index(category)
            confusion[category_i][guess_i] += 1
    for i in range(n_categories):
        confusion[i] = confusion[i] / confusion[i].sum()

    with torch.no_grad():
        output = evaluate(lineToTensor("Dovesky"))
        topv, topi = output.topk(2, 1, True)
        predictions = []
        for i in range(2):
            value = topv[0][i].item()
            category_index = topi[0][i].item()
            predictions.append([value, category_index])
    return {"ascii": unicodeToAscii("Ślusàrski"), "line": lineToTensor("Jones").size(),
            "losses": losses, "guesses": guesses, "confusion": confusion,
            "predictions": predictions, "i2o.weight": rnn.i2o.weight}
