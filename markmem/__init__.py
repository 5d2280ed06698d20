"""markmem: chatbot memory as plain markdown in a git repo you can read, audit and erase."""

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
