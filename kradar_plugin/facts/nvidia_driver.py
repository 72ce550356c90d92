"""The NVIDIA driver version, read without loading CUDA (a driver >= 580 segfaults old numba's CUDA
target). Shared by the rotated-IoU backend choice and the doctor's probes."""
import re
import subprocess

PROC_VERSION = '/proc/driver/nvidia/version'


def driver_version(proc_path=PROC_VERSION, use_smi=True):
    """'535.104.05' from the kernel module's version file, else (``use_smi``) from ``nvidia-smi``;
    None without a driver."""
    try:
        with open(proc_path) as f:
            text = f.read()
    except (IOError, OSError):
        text = ''
    if text:
        match = re.search(r'Kernel Module\s+(?:for\s+\S+\s+)?(\d+\.\d+(?:\.\d+)?)', text)
        if match is None:
            match = re.search(r'\b(\d{3}\.\d+(?:\.\d+)?)\b', text)
        if match is not None:
            return match.group(1)
    if not use_smi:
        return None
    try:
        out = subprocess.check_output(['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader'],
                                      stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.decode().strip().splitlines()
    return lines[0].strip() if lines else None
