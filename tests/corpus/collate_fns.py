"""Collate functions build CPU tensors; the loop moves them (or forgets to)."""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

from .batching import stack_examples


def pad_collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)  # ok: TDL003
    padded = pad_sequence([torch.as_tensor(s) for s in seqs], batch_first=True, padding_value=0)
    mask = torch.arange(padded.size(1))[None, :] < lengths[:, None]  # ok: TDL003
    return padded, lengths, mask, torch.tensor(labels)  # ok: TDL003


def image_collate(batch):
    images = torch.stack([item[0] for item in batch])
    targets = torch.zeros(len(batch), dtype=torch.long)  # ok: TDL003
    for i, (_, label) in enumerate(batch):
        targets[i] = label
    return images, targets


def detection_collate(batch):
    images, boxes = [], []
    for i, (image, target) in enumerate(batch):
        images.append(image)
        index = torch.full((target.size(0), 1), i, dtype=target.dtype)  # ok: TDL003
        boxes.append(torch.cat([index, target], dim=1))
    return torch.stack(images), torch.cat(boxes, 0)


class Seq2SeqCollator:
    def __init__(self, pad_id, bos_id):
        self.pad_id = pad_id
        self.bos_id = bos_id

    def __call__(self, batch):
        src = pad_sequence([b["src"] for b in batch], batch_first=True, padding_value=self.pad_id)
        tgt = pad_sequence([b["tgt"] for b in batch], batch_first=True, padding_value=self.pad_id)
        bos = torch.full((tgt.size(0), 1), self.bos_id, dtype=tgt.dtype)  # ok: TDL003
        decoder_input = torch.cat([bos, tgt[:, :-1]], dim=1)
        return {"src": src, "decoder_input": decoder_input, "labels": tgt}


class RNNClassifier(nn.Module):
    def __init__(self, vocab, emb, hidden, n_classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=0)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, tokens, lengths):
        emb = self.embed(tokens)
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.rnn(packed)
        return self.out(h[-1])


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
dataset = [([1, 2, 3], 0), ([4, 5], 1), ([6, 7, 8, 9], 0)]
loader = DataLoader(dataset, batch_size=2, collate_fn=pad_collate)
model = RNNClassifier(100, 32, 64, 2).to(device)
optimizer = torch.optim.Adam(model.parameters())

for padded, lengths, mask, labels in loader:
    padded = padded.to(device)
    mask = mask.to(device)
    labels.to(device)  # expect: TDL004
    logits = model(padded, lengths)
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

for padded, lengths, mask, labels in loader:
    padded, labels = padded.to(device), labels.to(device)
    logits = model(padded, lengths)
    prior = torch.tensor([0.7, 0.3])  # expect: TDL003  added to device logits
    adjusted = logits + prior.log()
    print((adjusted.argmax(-1) == labels).float().mean().item())


class DataCollatorForMaskedTokens:
    """A collator's helper methods take the batch it just built: CPU tensors."""

    def __init__(self, mask_id: int, probability: float = 0.15):
        self.mask_id = mask_id
        self.probability = probability

    def __call__(self, examples):
        batch = stack_examples(examples)
        inputs, labels = self.mask_tokens(batch["input_ids"], batch["word_mask"])
        return {"input_ids": inputs, "labels": labels}

    def mask_tokens(self, inputs: torch.Tensor, word_mask: torch.Tensor):
        labels = inputs.clone()
        masked = word_mask.bool()
        labels[~masked] = -100
        random_words = torch.randint(self.mask_id, labels.shape, dtype=torch.long)  # ok: TDL003
        inputs[masked] = random_words[masked]
        return inputs, labels


class RandomWalks(nn.Module):
    """A model whose loader samples walks in its own ``collate_fn`` (PyG's MetaPath2Vec): the
    helpers that method calls build CPU batches, whatever the tensor names say."""

    def __init__(self, num_nodes: int, walk_length: int):
        super().__init__()
        self.num_nodes = num_nodes
        self.walk_length = walk_length
        self.embedding = nn.Embedding(num_nodes, 16)

    def loader(self, **kwargs):
        return DataLoader(range(self.num_nodes), collate_fn=self._sample, **kwargs)

    def _sample(self, batch):
        if not isinstance(batch, torch.Tensor):
            batch = torch.tensor(batch, dtype=torch.long)  # ok: TDL003
        return self._negative_walks(batch)

    def _negative_walks(self, batch: torch.Tensor) -> torch.Tensor:
        walks = [batch]
        for _ in range(self.walk_length):
            batch = torch.randint(0, self.num_nodes, (batch.size(0),), dtype=torch.long)  # ok: TDL003
            walks.append(batch)
        return torch.stack(walks, dim=-1)

    def forward(self, batch: torch.Tensor) -> torch.Tensor:
        return self.embedding(batch)
