"""Every rule, one module each. Adding a rule means adding a module and listing it here."""

from torchdevice_lint.rules.tdl001_cuda_call import CudaCall
from torchdevice_lint.rules.tdl002_cuda_literal import CudaLiteral
from torchdevice_lint.rules.tdl003_factory_without_device import FactoryWithoutDevice
from torchdevice_lint.rules.tdl004_discarded_conversion import DiscardedConversion

ALL_RULES = (CudaCall, CudaLiteral, FactoryWithoutDevice, DiscardedConversion)

__all__ = ["ALL_RULES"]
