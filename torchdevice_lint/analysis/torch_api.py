"""What the analysis knows about PyTorch's API, as data.

Every table here is a fact about torch (see shared device-semantics notes), kept in one
place so that rules and the flow analysis agree on it.
"""

from __future__ import annotations

from typing import Optional

#: Factories that create a fresh tensor on the default (CPU) device unless given ``device=``.
FACTORIES = frozenset(
    {
        "torch.zeros",
        "torch.ones",
        "torch.empty",
        "torch.full",
        "torch.rand",
        "torch.randn",
        "torch.randint",
        "torch.randperm",
        "torch.arange",
        "torch.range",
        "torch.linspace",
        "torch.logspace",
        "torch.eye",
        "torch.tensor",
        "torch.as_tensor",
        "torch.from_numpy",
        "torch.empty_strided",
        "torch.tril_indices",
        "torch.triu_indices",
    }
)

#: Factories whose values come from the random generator: CUDA draws other numbers than the
#: CPU for the same seed, so giving them ``device=`` changes the values.
RANDOM_FACTORIES = frozenset(
    {"torch.rand", "torch.randn", "torch.randint", "torch.randperm"}
)

#: Factories whose first argument is data rather than a size: only a literal list or tuple
#: proves the result has at least one dimension.
DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor"})

#: Factories that accept no ``device=`` keyword; they are moved with ``.to()`` instead.
FACTORIES_WITHOUT_DEVICE_KEYWORD = frozenset({"torch.from_numpy"})

#: Functions that return a tensor placed like their tensor arguments and that raise when
#: those arguments sit on different devices.
COMBINING_FUNCTIONS = frozenset(
    {
        "torch.cat",
        "torch.bucketize",
        "torch.searchsorted",
        "torch.gather",
        "torch.index_select",
        "torch.scatter",
        "torch.scatter_add",
        "torch.index_add",
        "torch.concat",
        "torch.concatenate",
        "torch.stack",
        "torch.hstack",
        "torch.vstack",
        "torch.dstack",
        "torch.where",
        "torch.matmul",
        "torch.mm",
        "torch.bmm",
        "torch.einsum",
        "torch.add",
        "torch.sub",
        "torch.mul",
        "torch.div",
        "torch.maximum",
        "torch.minimum",
        "torch.fmax",
        "torch.fmin",
        "torch.logical_and",
        "torch.logical_or",
        "torch.logical_xor",
        "torch.atan2",
        "torch.remainder",
        "torch.fmod",
        "torch.floor_divide",
        "torch.true_divide",
        "torch.lerp",
        "torch.addmm",
        "torch.baddbmm",
        "torch.cdist",
        "torch.dot",
        "torch.outer",
        "torch.eq",
        "torch.ne",
        "torch.lt",
        "torch.le",
        "torch.gt",
        "torch.ge",
        "torch.masked_fill",
        "torch.nn.functional.linear",
        "torch.nn.functional.embedding",
        "torch.nn.functional.cross_entropy",
        "torch.nn.functional.nll_loss",
        "torch.nn.functional.mse_loss",
        "torch.nn.functional.l1_loss",
        "torch.nn.functional.smooth_l1_loss",
        "torch.nn.functional.binary_cross_entropy",
        "torch.nn.functional.binary_cross_entropy_with_logits",
        "torch.nn.functional.kl_div",
        "torch.nn.functional.cosine_similarity",
        "torch.nn.functional.scaled_dot_product_attention",
    }
)

#: Tensor methods whose tensor arguments must share the receiver's device.
COMBINING_METHODS = frozenset(
    {
        "add",
        "add_",
        "sub",
        "sub_",
        "mul",
        "mul_",
        "div",
        "div_",
        "matmul",
        "mm",
        "bmm",
        "masked_fill",
        "masked_fill_",
        "lerp",
        "lerp_",
        "maximum",
        "minimum",
        "fmax",
        "fmin",
        "logical_and",
        "logical_and_",
        "logical_or",
        "logical_or_",
        "logical_xor",
        "atan2",
        "remainder",
        "fmod",
        "floor_divide",
        "true_divide",
        "eq",
        "ne",
        "lt",
        "le",
        "gt",
        "ge",
        # Indices and sources written into (or read from) the receiver: one device for all.
        "index_copy", "index_copy_", "index_add", "index_add_", "index_put_", "index_select",
        "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_",
        "masked_scatter_", "gather", "take_along_dim",
    }
)

#: Combining methods that write into their receiver and exist only on tensors: the receiver of
#: ``input_label.scatter_(1, index, 1.0)`` is a tensor, whatever made it.
TENSOR_ONLY_WRITES = frozenset(
    {
        "scatter_",
        "scatter_add_",
        "scatter_reduce_",
        "index_copy_",
        "index_add_",
        "index_put_",
        "masked_scatter_",
    }
)

#: ``torch.max(a, b)``, ``a.min(b)``: given a second tensor, elementwise like ``maximum``;
#: given a dimension, a reduction with no partner.
ELEMENTWISE_WHEN_GIVEN_A_TENSOR = frozenset({"max", "min"})

#: Comparisons of two tensors that refuse tensors on two devices, 0-dim ones included
#: (``torch.testing.assert_close`` unless told ``check_device=False``).
DEVICE_CHECKING_COMPARISONS = frozenset(
    {"torch.allclose", "torch.isclose", "torch.equal", "torch.testing.assert_close", "torch.testing.assert_allclose"}
)
#: What test suites call their wrappers of ``torch.testing.assert_close``.
TEST_COMPARISON_NAMES = frozenset({"assert_close", "assert_allclose", "assertTensorClose", "assert_tensors_close"})

#: Other ``torch.*`` functions that return a tensor placed like their tensor arguments.
TENSOR_FUNCTIONS = COMBINING_FUNCTIONS | frozenset(
    {
        "torch.abs",
        "torch.floor",
        "torch.ceil",
        "torch.round",
        "torch.trunc",
        "torch.sign",
        "torch.neg",
        "torch.reciprocal",
        "torch.rsqrt",
        "torch.square",
        "torch.log1p",
        "torch.expm1",
        "torch.erf",
        "torch.cumprod",
        "torch.logical_not",
        "torch.exp",
        "torch.log",
        "torch.sqrt",
        "torch.sin",
        "torch.cos",
        "torch.tanh",
        "torch.sigmoid",
        "torch.relu",
        "torch.softmax",
        "torch.log_softmax",
        "torch.sum",
        "torch.mean",
        "torch.prod",
        "torch.cumsum",
        "torch.clamp",
        "torch.clip",
        "torch.flatten",
        "torch.reshape",
        "torch.transpose",
        "torch.permute",
        "torch.squeeze",
        "torch.unsqueeze",
        "torch.triu",
        "torch.tril",
        "torch.roll",
        "torch.flip",
        "torch.pow",
        "torch.argmax",
        "torch.argmin",
        "torch.max",
        "torch.min",
        "torch.norm",
        "torch.nn.functional.relu",
        "torch.nn.functional.gelu",
        "torch.nn.functional.silu",
        "torch.nn.functional.softmax",
        "torch.nn.functional.log_softmax",
        "torch.nn.functional.dropout",
        "torch.nn.functional.normalize",
        "torch.nn.functional.pad",
        "torch.nn.functional.interpolate",
        "torch.nn.functional.one_hot",
        "torch.nn.functional.layer_norm",
    }
)

#: ``torch.*`` functions whose first positional argument must be a tensor: NumPy arrays, numbers
#: and lists are refused (torch 2.13). Not those that take a number there (``torch.add(2, t)``,
#: ``torch.pow(2, t)``), a sequence (``torch.cat(parts)``) or an equation (``torch.einsum``).
TENSOR_OPERAND_FUNCTIONS = (TENSOR_FUNCTIONS - frozenset(
    {
        "torch.add", "torch.sub", "torch.mul", "torch.div", "torch.true_divide", "torch.floor_divide",
        "torch.remainder", "torch.pow", "torch.cat", "torch.concat", "torch.concatenate", "torch.stack",
        "torch.hstack", "torch.vstack", "torch.dstack", "torch.einsum",
    }
)) | frozenset(
    {
        "torch.topk", "torch.sort", "torch.argsort", "torch.std", "torch.var", "torch.amax", "torch.amin",
        "torch.nonzero", "torch.any", "torch.all", "torch.isnan", "torch.isinf",
    }
)


#: ``torch.*`` functions taking a sequence of tensors first: each part must be a tensor (NumPy
#: arrays, lists and numbers are refused, torch 2.13).
TENSOR_SEQUENCE_FUNCTIONS = frozenset(
    {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack", "torch.dstack"}
)


def takes_tensor_operand(qualified: str) -> bool:
    """``torch.mean(corr)``, ``torch.zeros_like(values)``: the first positional argument is a tensor."""
    return qualified in TENSOR_OPERAND_FUNCTIONS or (qualified.startswith("torch.") and qualified.endswith("_like"))


#: Tensor methods that return a tensor on the receiver's device.
TENSOR_RETURNING_METHODS = COMBINING_METHODS | frozenset(
    {
        # ``dst.copy_(src)`` copies across devices (CPU to CUDA and back) and returns ``dst``:
        # its source meets nothing.
        "copy_",
        "float",
        "half",
        "double",
        "bfloat16",
        "long",
        "int",
        "bool",
        "byte",
        "view",
        "view_as",
        "reshape",
        "reshape_as",
        "permute",
        "transpose",
        "t",
        "contiguous",
        "clone",
        "detach",
        "unsqueeze",
        "squeeze",
        "expand",
        "expand_as",
        "repeat",
        "flatten",
        "sum",
        "mean",
        "softmax",
        "log_softmax",
        "exp",
        "log",
        "sqrt",
        "abs",
        "pow",
        "neg",
        "sigmoid",
        "tanh",
        "relu",
        "clamp",
        "clamp_",
        "triu",
        "tril",
        "cumsum",
        "argmax",
        "argmin",
        "masked_select",
        "type_as",
        "requires_grad_",
        "fill_",
        "zero_",
        "normal_",
        "uniform_",
        "sin",
        "cos",
        "tan",
        "floor",
        "ceil",
        "round",
        "reciprocal",
        "rsqrt",
        "square",
        "sign",
        "erf",
        "log1p",
        "expm1",
        "exp2",
        "cumprod",
        "diff",
        "clip",
        "nan_to_num",
        "roll",
        "flip",
        "narrow",
        "unfold",
        "gather",
        "index_select",
        "scatter",
        "scatter_add",
    }
)

#: Tensor methods whose result is not a tensor on the receiver's device (Python values, sizes,
#: in-place bookkeeping, sequences of pieces); any other method of a tensor returns one, on its
#: device. Moves (``to``, ``cuda``, ``cpu``) and private methods are judged before this is read.
NON_TENSOR_METHODS = frozenset(
    {
        "item", "tolist", "numpy", "size", "dim", "ndimension", "numel", "nelement", "element_size",
        "stride", "storage", "untyped_storage", "data_ptr", "get_device", "is_contiguous", "is_floating_point",
        "is_complex", "is_signed", "is_pinned", "is_shared", "is_set_to", "equal", "allclose", "type",
        "backward", "register_hook", "retain_grad", "share_memory_", "pin_memory",
        "record_stream", "copy_", "set_", "resize_", "resize_as_", "apply_", "map_", "tobytes",
        "unbind", "split", "chunk", "tensor_split",
    }
)

#: Module-level functions of torch (``torch.<name>``) that are no tensor computation.
NON_TENSOR_FUNCTION_PREFIXES = ("is_", "set_", "get_", "use_", "are_", "manual_seed", "initial_seed", "seed")
NON_TENSOR_FUNCTIONS = frozenset(
    {
        "torch.save", "torch.load", "torch.numel", "torch.equal", "torch.allclose", "torch.compile", "torch.no_grad",
        "torch.enable_grad", "torch.inference_mode", "torch.typename", "torch.result_type", "torch.can_cast",
        "torch.promote_types", "torch.broadcast_shapes", "torch.cond", "torch.vmap", "torch.split", "torch.chunk",
        "torch.unbind", "torch.tensor_split", "torch.from_numpy", "torch.tensor", "torch.sparse_coo_tensor",
    }
)
#: Namespaces of torch whose functions compute tensors from tensors, like ``torch.<name>``.
TENSOR_FUNCTION_NAMESPACES = ("torch.linalg.", "torch.fft.", "torch.special.")


def computes_tensor(qualified: str) -> bool:
    """A function of torch that, given tensors, returns a tensor where they live (``torch.bincount``)."""
    if qualified in NON_TENSOR_FUNCTIONS or qualified in FACTORIES:
        return False
    if qualified.startswith(TENSOR_FUNCTION_NAMESPACES):
        return True
    prefix, _, name = qualified.rpartition(".")
    return prefix == "torch" and name[:1].islower() and not name.startswith(NON_TENSOR_FUNCTION_PREFIXES)


#: Tensor methods whose result has at least one dimension when given a size or a dimension
#: (``view(n, 1)``, ``unsqueeze(0)``; ``flatten()`` always): never a 0-dim scalar.
RANK_GIVING_METHODS = frozenset({"view", "reshape", "unsqueeze", "expand", "repeat", "flatten"})

#: Reductions that give a 0-dim tensor when called without a dimension.
FULL_REDUCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "norm", "std", "var", "amax", "amin", "all", "any"})

#: Methods that only exist on tensors: a name they are called on is a tensor.
TENSOR_ONLY_METHODS = frozenset(
    {
        "unsqueeze",
        "permute",
        "contiguous",
        "masked_fill",
        "masked_fill_",
        "detach",
        "new_zeros",
        "new_ones",
        "new_full",
        "new_empty",
        "new_tensor",
        "expand_as",
        "view_as",
        "type_as",
        "numel",
        "softmax",
        "log_softmax",
        "masked_select",
        "index_select",
        "data_ptr",
        "repeat_interleave",
    }
)

#: Methods that give a tensor on ``device``: ``x.new_zeros(...)`` and friends.
SAME_DEVICE_CONSTRUCTOR_METHODS = frozenset(
    {"new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"}
)

#: The conversions that return a copy on a tensor and convert in place on a module.
CONVERSION_METHODS = frozenset(
    {"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "type"}
)

#: Attributes of a tensor that are tensors on the same device.
TENSOR_ATTRIBUTES = frozenset({"data", "grad", "T", "mT", "H", "real", "imag"})

#: Every public member of ``torch.Tensor`` (torch 2.13): a name read with any other member, or
#: called, is no tensor. tests/test_torch_api.py checks it against the installed torch.
TENSOR_MEMBERS = frozenset(
    """
    H T abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ addbmm addbmm_ addcdiv addcdiv_
    addcmul addcmul_ addmm addmm_ addmv addmv_ addr addr_ adjoint all allclose amax amin aminmax angle
    any apply_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan2 arctan2_
    arctan_ arctanh arctanh_ argmax argmin argsort argwhere as_strided as_strided_ as_strided_scatter
    as_subclass asin asin_ asinh asinh_ atan atan2 atan2_ atan_ atanh atanh_ backward baddbmm baddbmm_
    bernoulli bernoulli_ bfloat16 bincount bitwise_and bitwise_and_ bitwise_left_shift
    bitwise_left_shift_ bitwise_not bitwise_not_ bitwise_or bitwise_or_ bitwise_right_shift
    bitwise_right_shift_ bitwise_xor bitwise_xor_ bmm bool broadcast_to byte cauchy_ ccol_indices
    cdouble ceil ceil_ cfloat chalf char cholesky cholesky_inverse cholesky_solve chunk clamp clamp_
    clamp_max clamp_max_ clamp_min clamp_min_ clip clip_ clone coalesce col_indices conj conj_physical
    conj_physical_ const_data_ptr contiguous copy_ copysign copysign_ corrcoef cos cos_ cosh cosh_
    count_nonzero cov cpu cross crow_indices cuda cummax cummin cumprod cumprod_ cumsum cumsum_ data
    data_ptr deg2rad deg2rad_ dense_dim dequantize det detach detach_ device diag diag_embed diagflat
    diagonal diagonal_scatter diff digamma digamma_ dim dim_order dist div div_ divide divide_ dot
    double dsplit dtype eig element_size eq eq_ equal erf erf_ erfc erfc_ erfinv erfinv_ exp exp2 exp2_
    exp_ expand expand_as expm1 expm1_ exponential_ fill_ fill_diagonal_ fix fix_ flatten flip fliplr
    flipud float float_power float_power_ floor floor_ floor_divide floor_divide_ fmax fmin fmod fmod_
    frac frac_ frexp gather gcd gcd_ ge ge_ geometric_ geqrf ger get_device grad grad_dtype grad_fn
    greater greater_ greater_equal greater_equal_ gt gt_ half hardshrink hash_tensor heaviside
    heaviside_ histc histogram hsplit hypot hypot_ i0 i0_ igamma igamma_ igammac igammac_ imag index
    index_add index_add_ index_copy index_copy_ index_fill index_fill_ index_put index_put_ index_reduce
    index_reduce_ index_select indices inner int int_repr inverse ipu is_coalesced is_complex is_conj
    is_contiguous is_cpu is_cuda is_distributed is_floating_point is_inference is_ipu is_leaf is_maia
    is_meta is_mkldnn is_mps is_mtia is_neg is_nested is_nonzero is_pinned is_quantized is_same_size
    is_set_to is_shared is_signed is_sparse is_sparse_csr is_vulkan is_xla is_xpu isclose isfinite isinf
    isnan isneginf isposinf isreal istft item itemsize kron kthvalue layout lcm lcm_ ldexp ldexp_ le le_
    lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_ log log10 log10_ log1p log1p_ log2 log2_
    log_ log_normal_ log_softmax logaddexp logaddexp2 logcumsumexp logdet logical_and logical_and_
    logical_not logical_not_ logical_or logical_or_ logical_xor logical_xor_ logit logit_ logsumexp long
    lstsq lt lt_ lu lu_solve mH mT map2_ map_ masked_fill masked_fill_ masked_scatter masked_scatter_
    masked_select matmul matrix_exp matrix_power max maximum mean median min minimum mm mode module_load
    moveaxis movedim msort mtia mul mul_ multinomial multiply multiply_ mv mvlgamma mvlgamma_ name
    nan_to_num nan_to_num_ nanmean nanmedian nanquantile nansum narrow narrow_copy nbytes ndim
    ndimension ne ne_ neg neg_ negative negative_ nelement new new_empty new_empty_strided new_full
    new_ones new_tensor new_zeros nextafter nextafter_ nonzero nonzero_static norm normal_ not_equal
    not_equal_ numel numpy orgqr ormqr outer output_nr permute pin_memory pinverse polygamma polygamma_
    positive pow pow_ prelu prod put put_ q_per_channel_axis q_per_channel_scales
    q_per_channel_zero_points q_scale q_zero_point qr qscheme quantile rad2deg rad2deg_ random_ ravel
    real reciprocal reciprocal_ record_stream register_hook register_post_accumulate_grad_hook reinforce
    relu relu_ remainder remainder_ renorm renorm_ repeat repeat_interleave requires_grad requires_grad_
    reshape reshape_as resize resize_ resize_as resize_as_ resize_as_sparse_ resolve_conj resolve_neg
    retain_grad retains_grad roll rot90 round round_ row_indices rsqrt rsqrt_ scatter scatter_
    scatter_add scatter_add_ scatter_reduce scatter_reduce_ select select_scatter set_ sgn sgn_ shape
    share_memory_ short sigmoid sigmoid_ sign sign_ signbit sin sin_ sinc sinc_ sinh sinh_ size
    slice_inverse slice_scatter slogdet smm softmax solve sort sparse_dim sparse_mask sparse_resize_
    sparse_resize_and_clear_ split split_with_sizes sqrt sqrt_ square square_ squeeze squeeze_ sspaddmm
    std stft storage storage_offset storage_type stride sub sub_ subtract subtract_ sum sum_to_size svd
    swapaxes swapaxes_ swapdims swapdims_ symeig t t_ take take_along_dim tan tan_ tanh tanh_
    tensor_split tile to to_dense to_mkldnn to_padded_tensor to_sparse to_sparse_bsc to_sparse_bsr
    to_sparse_coo to_sparse_csc to_sparse_csr tolist topk trace transpose transpose_ triangular_solve
    tril tril_ triu triu_ true_divide true_divide_ trunc trunc_ type type_as unbind unflatten unfold
    uniform_ unique unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes unsqueeze
    unsqueeze_ untyped_storage values var vdot view view_as volatile vsplit where xlogy xlogy_ xpu zero_
    """.split()
)

#: ``torch.nn`` modules whose call does not return a single tensor.
NON_TENSOR_RESULT_MODULES = frozenset(
    f"torch.nn.{name}"
    for name in (
        "RNN", "LSTM", "GRU", "MultiheadAttention", "AdaptiveLogSoftmaxWithLoss",
        "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Module", "Identity",
    )
)

#: Words in the names of ``torch.nn`` layers that own parameters or buffers: calling one with
#: a CPU tensor on a device raises. Activations, dropout, pooling, padding and the like have
#: no device of their own and pass their input through.
PARAMETER_MODULE_WORDS = (
    "Linear", "Conv", "Embedding", "LSTM", "GRU", "RNN", "Norm", "Attention", "Transformer",
    "PReLU", "Sequential", "ModuleList", "ModuleDict", "Bilinear",
)

#: Loss modules and functions whose targets and lengths may stay on the CPU.
CPU_TARGET_LOSSES = frozenset({"torch.nn.CTCLoss", "torch.nn.functional.ctc_loss"})

#: ``torch.nn`` classes that are tensors, not modules.
NN_TENSOR_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

#: ``torch.autograd.Variable(x)``: since PyTorch 0.4 it returns the tensor ``x`` itself.
VARIABLE_CLASSES = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

#: Base classes, outside torch.nn, whose subclasses are ``nn.Module``s.
THIRD_PARTY_MODULE_BASES = frozenset(
    {
        "pytorch_lightning.LightningModule",
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)

#: Classes whose ``.to()`` works in place (and returns the same object).
IN_PLACE_CLASSES = frozenset(
    {
        "transformers.BatchEncoding",
        "transformers.tokenization_utils_base.BatchEncoding",
        "torch_geometric.data.Data",
        "torch_geometric.data.Batch",
        "torch_geometric.data.HeteroData",
    }
)

#: Loaders that yield batches of tensors when their items are unpacked.
TENSOR_LOADERS = frozenset(
    {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
)

#: Calls whose truth says that an accelerator is present: code under them has a fallback.
AVAILABILITY_CHECKS = frozenset(
    {
        "torch.cuda.is_available",
        "torch.accelerator.is_available",
        "torch.backends.mps.is_available",
        "torch.xpu.is_available",
    }
)


def is_torch_nn_module_class(qualified_name: str) -> bool:
    """``torch.nn.Linear`` and friends: capitalised names under ``torch.nn``."""
    if qualified_name in NN_TENSOR_CLASSES or not qualified_name.startswith("torch.nn."):
        return False
    last = qualified_name.rsplit(".", 1)[-1]
    return last[:1].isupper() and ".functional." not in qualified_name and ".init." not in qualified_name

#: dtypes: ``.to(torch.float16)`` converts but does not move.
DTYPES = frozenset(
    f"torch.{name}"
    for name in (
        "float", "float16", "float32", "float64", "half", "double", "bfloat16",
        "int", "int8", "int16", "int32", "int64", "long", "short", "uint8", "bool",
        "complex64", "complex128", "cfloat", "cdouble",
    )
)

#: Legacy tensor types (constructors and ``.type()`` targets) and the dtype each one means.
#: ``torch.Tensor`` means the default dtype (None here). The ``torch.cuda.*`` ones also place
#: the tensor on the current CUDA device; the others on the CPU.
LEGACY_TENSOR_TYPES: dict[str, Optional[str]] = {
    f"{prefix}{name}Tensor": dtype
    for prefix in ("torch.", "torch.cuda.")
    for name, dtype in (
        ("Float", "torch.float32"),
        ("Double", "torch.float64"),
        ("Half", "torch.float16"),
        ("BFloat16", "torch.bfloat16"),
        ("Byte", "torch.uint8"),
        ("Char", "torch.int8"),
        ("Short", "torch.int16"),
        ("Int", "torch.int32"),
        ("Long", "torch.int64"),
        ("Bool", "torch.bool"),
    )
}
LEGACY_TENSOR_TYPES["torch.Tensor"] = None

#: Methods that wait for queued device work (``torch.cuda.synchronize()``, ``stream.synchronize()``,
#: ``event.synchronize()``, ``stream.wait_stream(...)``, ``event.wait()``): after one, the result
#: of a non-blocking copy may be read.
SYNCHRONIZING_METHODS = frozenset({"synchronize", "wait_stream", "wait_event", "wait"})

#: ``torch.nn.DataParallel`` under every public name, and its functional form.
DATA_PARALLEL = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel.DataParallel",
        "torch.nn.parallel.data_parallel",
        "torch.nn.parallel.data_parallel.data_parallel",
    }
)
