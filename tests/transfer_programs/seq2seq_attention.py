"""The seq2seq translation tutorial (pytorch/tutorials intermediate_source/
seq2seq_translation_tutorial.py) at toy size: EncoderRNN (nn.Embedding, nn.Dropout, nn.GRU
with batch_first), BahdanauAttention (Wa, Ua, Va; scores.squeeze(2).unsqueeze(1),
F.softmax, torch.bmm), AttnDecoderRNN's forward_step with torch.cat((embedded, context),
dim=2), teacher forcing with target_tensor[:, i].unsqueeze(1), decoder_output.topk(1) and
topi.squeeze(-1).detach(), F.log_softmax, torch.empty(..., dtype=torch.long).fill_(SOS_token),
nn.NLLLoss over view(-1, ...), two Adam optimizers; train_epoch's loop and evaluate."""

import numpy as np


def program(torch, same):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    device = torch.device("cpu")
    SOS_token, EOS_token, MAX_LENGTH = 0, 1, 5

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super(BahdanauAttention, self).__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super(AttnDecoderRNN, self).__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long, device=device).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
        total_loss = 0
        for data in dataloader:
            input_tensor, target_tensor = data
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(
                decoder_outputs.view(-1, decoder_outputs.size(-1)),
                target_tensor.view(-1)
            )
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
        return total_loss / len(dataloader)

    rng = np.random.default_rng(17)
    n_words_in, n_words_out, hidden_size = 9, 8, 6
    input_ids = np.zeros((6, MAX_LENGTH), dtype=np.int32)
    target_ids = np.zeros((6, MAX_LENGTH), dtype=np.int32)
    for idx in range(6):
        n = int(rng.integers(2, MAX_LENGTH))
        input_ids[idx, :n - 1] = rng.integers(2, n_words_in, n - 1)
        input_ids[idx, n - 1] = EOS_token
        target_ids[idx, :n - 1] = rng.integers(2, n_words_out, n - 1)
        target_ids[idx, n - 1] = EOS_token
    train_data = torch.utils.data.TensorDataset(torch.LongTensor(input_ids).to(device),
                                                torch.LongTensor(target_ids).to(device))
    train_dataloader = torch.utils.data.DataLoader(train_data, batch_size=3)

    encoder = same(EncoderRNN(n_words_in, hidden_size, dropout_p=0.0).to(device))
    decoder = same(AttnDecoderRNN(hidden_size, n_words_out, dropout_p=0.0).to(device))
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    losses = [train_epoch(train_dataloader, encoder, decoder, encoder_optimizer,
                          decoder_optimizer, criterion) for _ in range(3)]

    with torch.no_grad():
        input_tensor = torch.LongTensor(input_ids[:1])
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
        decoded_words = []
        for idx in decoded_ids:
            if idx.item() == EOS_token:
                decoded_words.append('<EOS>')
                break
            decoded_words.append(str(idx.item()))
    return {"losses": losses, "decoded_ids": decoded_ids, "attn": decoder_attn,
            "words": " ".join(decoded_words), "Va.weight": decoder.attention.Va.weight}
