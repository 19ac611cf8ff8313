"""CTC heads and alignment losses: CTC takes targets and lengths on the CPU."""

import torch
import torch.nn.functional as F
from torch import nn


class CTCHead(nn.Module):
    def __init__(self, d_model, vocab, blank=0):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)
        self.ctc = nn.CTCLoss(blank=blank, zero_infinity=True)

    def forward(self, feats, targets, target_lengths):
        log_probs = self.proj(feats).log_softmax(-1).transpose(0, 1)
        input_lengths = torch.full((feats.size(0),), log_probs.size(0), dtype=torch.long)  # ok: TDL003  CTC accepts CPU lengths
        return self.ctc(log_probs, targets, input_lengths, target_lengths)


class MonotonicAlignmentLoss(nn.Module):
    """Forward-sum alignment loss: every text position must be visited in order."""

    def __init__(self, blank_logprob=-1.0):
        super().__init__()
        self.blank_logprob = blank_logprob
        self.ctc = nn.CTCLoss(zero_infinity=True)

    def forward(self, attn_logprob, text_lens, mel_lens):
        padded = F.pad(attn_logprob, (1, 0), value=self.blank_logprob)
        total = 0.0
        for b in range(attn_logprob.shape[0]):
            target = torch.arange(1, int(text_lens[b]) + 1).unsqueeze(0)  # ok: TDL003  CTC moves CPU targets itself
            logprob = padded[b].permute(1, 0, 2)[: mel_lens[b], :, : text_lens[b] + 1].log_softmax(-1)
            total = total + self.ctc(logprob, target, mel_lens[b : b + 1], text_lens[b : b + 1])
        return total / attn_logprob.shape[0]


def ctc_greedy_loss(log_probs: torch.Tensor, labels, device):
    log_probs = log_probs.to(device)
    flat = torch.tensor([t for seq in labels for t in seq], dtype=torch.long)  # ok: TDL003  CPU targets are accepted
    target_lengths = torch.tensor([len(seq) for seq in labels])  # ok: TDL003
    input_lengths = torch.full((log_probs.size(1),), log_probs.size(0))  # ok: TDL003
    return F.ctc_loss(log_probs, flat, input_lengths, target_lengths)
