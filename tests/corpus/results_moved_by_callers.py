"""Helpers whose callers move what they return to the device at once (masking tokens for a
language-model step, building candidate boxes): they work where their inputs came from, off
the device, so a factory meeting those inputs is where they are. The same kind of helper whose
result is kept where it is works on the caller's device."""

import torch


class MaskedLMTrainer:
    def __init__(self, model, tokenizer, device):
        self.model = model
        self.tokenizer = tokenizer
        self.device = device

    def mask_tokens(self, inputs: torch.Tensor, probability=0.15):
        labels = inputs.clone()
        chances = torch.full(labels.shape, probability)  # ok: TDL003 every caller moves the result at once
        chances.masked_fill_(labels.eq(self.tokenizer.pad_token_id), value=0.0)
        masked = torch.bernoulli(chances).bool()
        labels[~masked] = -100
        return inputs, labels

    def train_step(self, texts):
        inputs = self.encode(texts)
        inputs, labels = self.mask_tokens(inputs)
        inputs, labels = inputs.to(self.device), labels.to(self.device)
        return self.model(inputs, labels=labels).loss


def shifted_boxes(boxes, sizes):
    shifts = torch.zeros(1, 9, 4)  # ok: TDL003 the only call's result is moved at once
    return (boxes.unsqueeze(1) + shifts) * sizes


def candidate_boxes(boxes, sizes, device):
    return shifted_boxes(boxes, sizes).view(-1, 4).to(device)


def jitter(points, scale):
    noise = torch.randn(points.shape)  # expect: TDL003 the result stays where the caller's points are
    return points.unsqueeze(0) + noise * scale


def jittered(model, points):
    return model(jitter(points, 0.1))
