"""Drop-in APIs of other memory libraries over markmem (``compat.mem0``)."""
