# Optional masks and factories that reach a meeting on one path only: a CRF-style layer whose
# mask defaults to a CPU factory, and the shapes that must stay quiet (elements that may be
# 0-dim, factories moved on the other path).
import torch


class ConditionalRandomField(torch.nn.Module):
    def __init__(self, num_tags: int):
        super().__init__()
        self.transitions = torch.nn.Parameter(torch.randn(num_tags, num_tags))

    def _input_likelihood(self, logits: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        batch_size, sequence_length, num_tags = logits.size()
        mask = mask.transpose(0, 1).contiguous()
        logits = logits.transpose(0, 1).contiguous()
        alpha = logits[0]
        for i in range(1, sequence_length):
            inner = alpha.view(batch_size, num_tags, 1) + self.transitions.view(1, num_tags, num_tags)
            alpha = inner.logsumexp(1) * mask[i].view(batch_size, 1) + alpha * (~mask[i]).view(batch_size, 1)
        return alpha.logsumexp(-1)

    def forward(self, inputs: torch.Tensor, tags: torch.Tensor, mask: torch.BoolTensor = None) -> torch.Tensor:
        if mask is None:
            mask = torch.ones(*tags.size(), dtype=torch.bool)  # expect: TDL003  the None path meets the inputs in the helper
        else:
            mask = mask.to(torch.bool)
        return self._input_likelihood(inputs, mask).sum()


def masked_mean(values, mask=None):
    if mask is None:
        mask = torch.ones(values.size(0), values.size(1))  # expect: TDL003  the default path multiplies the caller's values
    return (values * mask).sum(1) / mask.sum(1)


def last_step_score(scores, mask=None):
    if mask is None:
        mask = torch.ones(scores.shape[0], scores.shape[1])  # ok: TDL003  only an element reaches the device: it may be 0-dim
    return scores[-1] * mask[-1, 0]


def weights_for(values, use_cuda: bool):
    weights = torch.ones(values.shape[-1])  # ok: TDL003  moved on the path that meets the device
    if use_cuda:
        weights = weights.cuda()
    return values * weights
