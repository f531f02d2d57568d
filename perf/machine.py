"""What the numbers were measured on, and how much memory this process holds (Linux /proc, else rusage)."""

from __future__ import annotations

import os
import platform
import resource

# Only the library's version string is read, for the report; perf sends no SQL of its own.
import sqlite3
import sys
from pathlib import Path
from typing import Any

import hnswlib
import numpy as np


def machine_info() -> dict[str, Any]:
    """CPU, cores this process may use, memory and library versions."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    torch = sys.modules.get("torch")
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "memory_bytes": _memory_total(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "hnswlib": getattr(hnswlib, "__version__", "unknown"),
        "torch_threads": None if torch is None else int(torch.get_num_threads()),
        "loadavg": loadavg(),
    }


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages where the platform has them."""
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or ""


def _memory_total() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _proc_status_bytes(field_name: str) -> int | None:
    """A `kB` field of /proc/self/status in bytes (Linux), else None."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith(field_name + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def rss_bytes() -> int:
    """Current resident set size."""
    current = _proc_status_bytes("VmRSS")
    return peak_rss_bytes() if current is None else current


def peak_rss_bytes() -> int:
    """Peak resident set size of this process image.

    VmHWM first: Linux carries `ru_maxrss` across fork and exec, so a child started from a large
    parent would report the parent's peak.
    """
    peak = _proc_status_bytes("VmHWM")
    if peak is not None:
        return peak
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    return int(maxrss) if sys.platform == "darwin" else int(maxrss) * 1024
