"""Recurrent models: initial states, packed sequences whose lengths stay on the CPU."""

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden, layers=2):
        super().__init__()
        self.layers, self.hidden = layers, hidden
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, layers, batch_first=True)
        self.fc = nn.Linear(hidden, vocab)

    def forward(self, x):
        b = x.size(0)
        h0 = torch.zeros(self.layers, b, self.hidden)  # expect: TDL003
        c0 = torch.zeros(self.layers, b, self.hidden)  # expect: TDL003
        out, _ = self.lstm(self.embed(x), (h0, c0))
        return self.fc(out)


class CharRNNOnDevice(CharRNN):
    def forward(self, x):
        b = x.size(0)
        h0 = torch.zeros(self.layers, b, self.hidden, device=x.device)  # ok: TDL003
        c0 = torch.zeros_like(h0)  # ok: TDL003
        out, _ = self.lstm(self.embed(x), (h0, c0))
        return self.fc(out)


class GRUTagger(nn.Module):
    def __init__(self, n_in, hidden, n_tags, num_layers=1):
        super().__init__()
        self.num_layers, self.hidden_size = num_layers, hidden
        self.gru = nn.GRU(n_in, hidden, num_layers, batch_first=True)
        self.proj = nn.Linear(hidden, n_tags)

    def init_hidden(self, batch_size):
        return torch.zeros(self.num_layers, batch_size, self.hidden_size)  # expect: TDL003  forward passes it to the GRU

    def forward(self, x):
        h = self.init_hidden(x.size(0))
        out, h = self.gru(x, h)
        return self.proj(out)


class WordLM(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.nlayers, self.nhid = nlayers, nhid
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))  # ok: TDL003

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden


class GRUCellDecoder(nn.Module):
    def __init__(self, n_in, hidden, steps):
        super().__init__()
        self.cell = nn.GRUCell(n_in, hidden)
        self.hidden, self.steps = hidden, steps
        self.out = nn.Linear(hidden, n_in)

    def forward(self, x0):
        h = torch.zeros(x0.size(0), self.hidden)  # expect: TDL003  first state of a device GRU cell
        x, outputs = x0, []
        for _ in range(self.steps):
            h = self.cell(x, h)
            x = self.out(h)
            outputs.append(x)
        return torch.stack(outputs, dim=1)


class PackedEncoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, dim, batch_first=True, bidirectional=True)

    def forward(self, tokens, lengths):
        emb = self.embed(tokens)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True)
        return out, torch.cat([h[-2], h[-1]], dim=-1)


def encode_batch(encoder: PackedEncoder, seqs, device):
    tokens = pad_sequence(seqs, batch_first=True).to(device)
    lengths = torch.tensor([len(s) for s in seqs])  # ok: TDL003  pack_padded_sequence wants CPU lengths
    return encoder(tokens, lengths)


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
lm = WordLM(1000, 64, 128, 2).to(device)
hidden = lm.init_hidden(20)
for batch_tokens in torch.randint(0, 1000, (5, 35, 20)):  # ok: TDL003
    hidden = repackage_hidden(hidden)
    output, hidden = lm(batch_tokens.to(device), hidden)

tagger = GRUTagger(16, 32, 5)
tagger.to(device)  # ok: TDL004
state = tagger.init_hidden(4)
state.to(device)  # expect: TDL004
sequence = torch.randn(4, 10, 16).to(device)  # ok: TDL003
tags = tagger(sequence)


@torch.no_grad()
def generate(model: CharRNN, start_ids, steps, device):
    model.to(device)  # ok: TDL004
    model.eval()
    x = torch.tensor([start_ids], dtype=torch.long)  # expect: TDL003  fed to the moved model
    for _ in range(steps):
        logits = model(x)[:, -1]
        nxt = torch.multinomial(logits.softmax(-1), 1)
        x = torch.cat([x, nxt], dim=1)
    return x
