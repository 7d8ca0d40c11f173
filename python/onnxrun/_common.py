"""Argument helpers shared by the session and tensor-file functions."""
import re
from typing import Union

_SIZE = re.compile(r"^([0-9]+)([KkMmGg]?)$")
_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30}


def parse_memory(value: Union[int, str, None], what: str = "max_memory") -> int:
    """Bytes as an int, or a string like the CLI's --max-memory ("1048576", "512M", "8G").
    None (and 0) mean the library's default cap. Returns an int >= 0."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise TypeError("%s must be an int or a string such as '512M', not bool" % what)
    if isinstance(value, str):
        m = _SIZE.match(value.strip())
        if not m:
            raise ValueError("%s needs a byte count such as 1048576, '512M' or '8G', not %r"
                             % (what, value))
        value = int(m.group(1)) << _SHIFT[m.group(2).lower()]
    if isinstance(value, int):
        if not 0 <= value < 1 << 64:
            raise ValueError("%s must be a byte count in 0..2**64-1, got %d" % (what, value))
        return value
    raise TypeError("%s must be an int or a string such as '512M', not %s"
                    % (what, type(value).__name__))
