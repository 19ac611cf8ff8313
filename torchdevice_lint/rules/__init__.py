"""Every rule, one module each. Adding a rule means adding a module and listing it here."""

from typing import Optional

from torchdevice_lint.rule import Rule
from torchdevice_lint.rules.tdl001_cuda_call import CudaCall
from torchdevice_lint.rules.tdl002_cuda_literal import CudaLiteral
from torchdevice_lint.rules.tdl003_factory_without_device import FactoryWithoutDevice
from torchdevice_lint.rules.tdl004_discarded_conversion import DiscardedConversion
from torchdevice_lint.rules.tdl005_load_without_map_location import LoadWithoutMapLocation
from torchdevice_lint.rules.tdl006_legacy_constructor import LegacyConstructor
from torchdevice_lint.rules.tdl007_legacy_type_conversion import LegacyTypeConversion
from torchdevice_lint.rules.tdl008_numpy_on_device import NumpyOnDevice
from torchdevice_lint.rules.tdl009_plain_tensor_attribute import PlainTensorAttribute
from torchdevice_lint.rules.tdl010_hardcoded_device_index import HardcodedDeviceIndex
from torchdevice_lint.rules.tdl011_data_parallel import DataParallel
from torchdevice_lint.rules.tdl012_pinned_memory import PinnedMemory
from torchdevice_lint.rules.tdl013_factory_meets_argument import FactoryMeetsArgument

ALL_RULES = (
    CudaCall,
    CudaLiteral,
    FactoryWithoutDevice,
    DiscardedConversion,
    LoadWithoutMapLocation,
    LegacyConstructor,
    LegacyTypeConversion,
    NumpyOnDevice,
    PlainTensorAttribute,
    HardcodedDeviceIndex,
    DataParallel,
    PinnedMemory,
    FactoryMeetsArgument,
)



def rule_for(code: str) -> Optional[type[Rule]]:
    """The rule with this code, if any."""
    return next((rule for rule in ALL_RULES if rule.code == code), None)


__all__ = ["ALL_RULES", "rule_for"]
