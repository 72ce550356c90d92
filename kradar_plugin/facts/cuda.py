"""CUDA version tables: the oldest driver of each toolkit, the newest GPU each torch CUDA build has kernels for.

Sources: NVIDIA's CUDA release notes (driver table); ``torch.cuda.get_arch_list()`` of the official wheels.
"""
from .versions import parse_version


# Oldest Linux driver for each CUDA toolkit (NVIDIA CUDA release notes, "CUDA Toolkit and Corresponding
# Driver Versions", GA releases). A toolkit newer than the driver produces PTX the driver cannot JIT:
# "ptxas ... Unsupported .version" / CUDA_ERROR_UNSUPPORTED_PTX_VERSION (OpenPCDet#675, numba#8961).
CUDA_MIN_DRIVER = (
    ('8.0', '375.26'), ('9.0', '384.81'), ('9.1', '390.46'), ('9.2', '396.26'), ('10.0', '410.48'),
    ('10.1', '418.39'), ('10.2', '440.33'), ('11.0', '450.36.06'), ('11.1', '455.23'),
    ('11.2', '460.27.03'), ('11.3', '465.19.01'), ('11.4', '470.42.01'), ('11.5', '495.29.05'),
    ('11.6', '510.39.01'), ('11.7', '515.43.04'), ('11.8', '520.61.05'), ('12.0', '525.60.13'),
    ('12.1', '530.30.02'), ('12.2', '535.54.03'), ('12.3', '545.23.06'), ('12.4', '550.54.14'),
    ('12.5', '555.42.02'), ('12.6', '560.28.03'), ('12.8', '570.26'), ('12.9', '575.51.03'),
    ('13.0', '580.65.06'),
)


def _newest_reached(table, version):
    """The value of the last (threshold, value) row that ``version`` reaches; None if none or unknown."""
    v = parse_version(version)
    reached = [value for threshold, value in table if v is not None and v >= threshold]
    return reached[-1] if reached else None


def driver_max_cuda(driver):
    """Newest CUDA toolkit in CUDA_MIN_DRIVER that ``driver`` ('535.104.05') runs; None if unknown."""
    return _newest_reached(((d, cuda) for cuda, d in CUDA_MIN_DRIVER), driver)


# torch CUDA builds -> highest GPU compute capability with native kernels (torch.cuda.get_arch_list() of
# the official wheels); newer GPUs fail with "no kernel image is available for execution on the device".
TORCH_CUDA_MAX_CC = (('10.0', '7.5'), ('11.0', '8.0'), ('11.1', '8.6'), ('11.8', '9.0'), ('12.8', '12.0'))


def torch_cuda_max_cc(torch_cuda):
    """Highest compute capability the official torch wheels for CUDA ``torch_cuda`` compile for."""
    return _newest_reached(TORCH_CUDA_MAX_CC, torch_cuda)
