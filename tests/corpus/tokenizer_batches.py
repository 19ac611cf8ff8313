"""Hugging Face tokenizer batches: BatchEncoding.to() moves the batch in place."""

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, BatchEncoding

device = "cuda" if torch.cuda.is_available() else "cpu"
tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
model.to(device)  # ok: TDL004


def encode(texts, max_length=128):
    enc = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    enc.to(device)  # ok: TDL004
    return enc


def collate(examples):
    texts = [ex["text"] for ex in examples]
    batch = tokenizer(texts, padding="longest", return_tensors="pt")
    batch["labels"] = torch.tensor([ex["label"] for ex in examples])  # ok: TDL003
    return batch


@torch.no_grad()
def predict(texts):
    model.eval()
    enc = encode(texts)
    logits = model(**enc).logits
    return logits.softmax(-1).cpu()


def evaluate(dataset):
    texts = [ex["text"] for ex in dataset]
    label_ids = [ex["label"] for ex in dataset]
    probs = predict(texts)
    labels = torch.tensor(label_ids)  # ok: TDL003  the probabilities came back to the CPU
    return (probs.argmax(-1) == labels).float().mean().item()


def train_step(batch: BatchEncoding, optimizer):
    batch.to(device)  # ok: TDL004
    outputs = model(**batch)
    outputs.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return outputs.loss.item()


def train(dataset, epochs=1):
    loader = DataLoader(dataset, batch_size=16, shuffle=True, collate_fn=collate)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
    for _ in range(epochs):
        for batch in loader:
            batch.to(device)  # ok: TDL004
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


manual = BatchEncoding({"input_ids": torch.tensor([[101, 2023, 102]]), "attention_mask": torch.ones(1, 3, dtype=torch.long)})  # ok: TDL003
manual.to(device)  # ok: TDL004
pair = tokenizer("first sentence", "second sentence", return_tensors="pt")
pair.to(device)  # ok: TDL004
pair["token_type_ids"] = torch.zeros_like(pair["input_ids"])  # ok: TDL003
with torch.no_grad():
    pair_logits = model(**pair).logits
