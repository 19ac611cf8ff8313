"""Writing into an item of a tensor inside a loop does not rebind its name: the other branch
still meets the tensor the factory made before the loop."""

import torch


class ViterbiDecoder:
    def decode(self, emissions_and_lengths):
        emissions, lengths = emissions_and_lengths
        batch, steps = emissions.size(0), emissions.size(1)
        best = torch.zeros(batch, steps, 5)  # expect: TDL003 filled in step 0, met in the others
        for step in range(steps):
            if step == 0:
                best[:, step] = emissions[:, step, :, 0]
            else:
                best[:, step], _ = torch.max(emissions[:, step] + best[:, step - 1].unsqueeze(1), dim=2)
        return best


def accumulate(chunks):
    total = None
    for index, chunk in enumerate(chunks):
        if index == 0:
            total = torch.zeros(chunk.size())  # ok: TDL003 loop state, rebound in the other branch
        else:
            total = total + chunk.sum(dim=0)
    return total


def running_sum(steps: torch.Tensor):
    out = torch.zeros(1)  # ok: TDL003 rebound in one branch: the other sees a later iteration's value
    for step in steps:
        if step.sum() > 0:
            out = step
        else:
            out = torch.cat((out, step))
    return out
