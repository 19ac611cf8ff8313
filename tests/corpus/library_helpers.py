# A library file that names no place for its tensors: a helper that only the file's other
# functions call runs wherever their callers put the tensors (gpytorch's _psd_safe_cholesky under
# psd_safe_cholesky, 101d3729b3). Hard negative: a helper the file's own top-level code runs,
# through main().
import torch


def _scaled(features):
    scale = torch.ones(features.size(1))  # expect: TDL003  its callers' callers choose the place
    return features.view(-1, features.size(1)) / scale


def scaled(features):
    return _scaled(features)


def _offsets(batch):
    row, col = batch
    return row + torch.arange(row.size(0))  # ok: TDL003  main() below runs it on host tensors


def main():
    print(_offsets(torch.randint(0, 4, (2, 5))))


if __name__ == "__main__":
    main()
