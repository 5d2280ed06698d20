"""markmem: chatbot memory as plain markdown in a git repo you can read, audit and erase."""

import os as _os
import sys as _sys

# numpy's OpenBLAS, loaded with numpy by a process's first search, starts a worker thread per core that
# spins ~2**28 cycles before it sleeps: 20-50 ms of CPU a fresh process burns for nothing (markmem's
# products are single-threaded einsum: read/vectors.py). 2**4 cycles: the idle workers sleep at once; a
# caller's own BLAS work keeps its threads. A value already set wins; none is set once numpy is loaded.
if "numpy" not in _sys.modules:
    _os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

from .config import Settings
from .errors import (
    EditQuarantined,
    EncryptionError,
    ErasureError,
    GateUnavailable,
    InvalidInput,
    InvalidUserId,
    LockTimeout,
    MalformedPage,
    MarkmemError,
    NotFound,
    PiiBlocked,
    RepoError,
)
from .memory import Memory
from .model import AddResult, Claim, Commit, CompileReport, Hit, Pack, Page, RawEntry, Source
from .ports import PiiPolicy

__version__ = "0.1.0"

__all__ = [
    "AddResult",
    "Claim",
    "Commit",
    "CompileReport",
    "EditQuarantined",
    "EncryptionError",
    "ErasureError",
    "GateUnavailable",
    "Hit",
    "InvalidInput",
    "InvalidUserId",
    "LockTimeout",
    "MalformedPage",
    "MarkmemError",
    "Memory",
    "NotFound",
    "Pack",
    "Page",
    "PiiBlocked",
    "PiiPolicy",
    "RawEntry",
    "RepoError",
    "Settings",
    "Source",
    "__version__",
]
