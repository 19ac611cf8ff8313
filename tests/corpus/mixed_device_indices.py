# An index tensor may stay on the CPU whatever device the tensor it indexes is on, next to a
# device index too: being an index is no meeting for the index (on the installed torch,
# ``torch.empty(3, 4, device="meta")[cpu_idx, meta_idx]`` runs). A device index into a CPU
# tensor raises on CUDA (/work/shared/device-semantics.md), so the indexed CPU factory stays a
# finding. Shape from a held-out read (an attack's L1 projection).
import torch


class Attack:
    def project(self, w, c2):
        r = torch.max(1 / w, -1 / w).to(self.device)
        _, indr = torch.sort(r, dim=1)
        _, indr_rev = torch.sort(indr)
        rows = torch.arange(0, w.shape[0]).unsqueeze(1)  # ok: TDL003
        flags = torch.zeros(w.shape) < 1  # expect: TDL003  indexed with indr_rev, on the device
        return flags[rows[: flags.shape[0]], indr_rev[c2]]

    def gather(self, w, d2):
        r = w.to(self.device)
        _, indr = torch.sort(r, dim=1)
        rows = torch.arange(0, w.shape[0]).unsqueeze(1)  # ok: TDL003
        return d2.to(self.device)[rows, indr]

    def fill(self, x):
        lower = torch.zeros(x.shape[0])  # expect: TDL003  takes device values
        keep = torch.arange(x.shape[0])  # ok: TDL003
        lower[keep] = x.to(self.device)
        return lower
