# Parameters whose docstring gives them a tensor type are the caller's tensors, as annotated ones
# are; a helper of the file that returns an index of its parameter (``return value[dims]``) gives
# back part of the argument. Shape from speechbrain's data_utils (736d2a4125: ``length_range``
# returns ``torch.arange(max_len)`` expanded, compared with the caller's ``start`` passed through
# ``unsqueeze_1d``; the parameters are typed only in the docstrings), with hard negatives.
import torch


def unsqueeze_1d(value, dim, value_dim):
    """Unsqueezes a 1-D tensor to ``dim`` dimensions.

    Arguments
    ---------
    value: torch.Tensor
        a 1-D tensor
    dim: int
        the number of dimensions
    value_dim: int
        the dimension that the value represents
    """
    unsqueeze_dim = [None] * dim
    unsqueeze_dim[value_dim] = ...
    return value[unsqueeze_dim]


def length_range(feats, len_dim):
    """A range along the length dimension, repeated to the shape of ``feats``.

    Arguments
    ---------
    feats: torch.Tensor
        a features tensor
    len_dim: int
        the length dimension
    """
    max_len = feats.size(len_dim)
    feats_range = torch.arange(max_len)  # expect: TDL003  compared with the caller's start in boundaries_to_mask
    out = unsqueeze_1d(feats_range, feats.dim(), len_dim)
    return out.repeat(2, 1)


def boundaries_to_mask(target, start, end, len_dim=1):
    """A Boolean mask of the positions between ``start`` and ``end``.

    Arguments
    ---------
    target: torch.Tensor
        the target tensor
    start: torch.Tensor
        the starting positions within each batch
    end: torch.Tensor
        the final positions within each batch
    len_dim: int
        the length dimension
    """
    out_range = length_range(target, len_dim)
    feats_dim = target.dim()
    item_start = unsqueeze_1d(start, feats_dim, 0)
    item_end = unsqueeze_1d(end, feats_dim, 0)
    return (item_start <= out_range) & (out_range < item_end)


def positions_from(feats, offset):
    """Positions from an offset.

    Args:
        feats (torch.Tensor): the features.
        offset (int): where the positions start.
    """
    steps = torch.arange(feats.size(1))  # ok: TDL003  a number, documented as one, meets it
    return steps >= offset


def window_mask(lengths, limit):
    """A mask of the positions under ``limit``.

    :param lengths: the lengths
    :type lengths: torch.Tensor or numpy.ndarray
    :param limit: the limit
    """
    positions = torch.arange(int(lengths.max()))  # ok: TDL003  a tensor or an array: not documented as a tensor
    return unsqueeze_1d(lengths, 2, 0) > positions
