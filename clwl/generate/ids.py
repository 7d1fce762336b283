"""Message ids and times of day as the put records print them (the simulation's and the partitions' rows)."""

from __future__ import annotations

ZERO_TOKEN = b"\0" * 32
ZERO_TOKEN_HEX = "0" * 64


def seven_bit(n: int) -> bytes:
    """Four bytes below 0x80 (an amqsbcg character column stays one byte per character)."""
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def id_prefix(qm: str, day_index: int, kind: int) -> bytes:
    """'AMQ ' + queue manager name (12) + 4 bytes for the day and the kind of id."""
    return b"AMQ " + qm.ljust(12).encode() + bytes([0x5A, (day_index >> 7) & 0x7F, day_index & 0x7F, 0x40 + kind])


MS_SUFFIX = [f".{i:03d}Z" for i in range(1000)]
LOW_HEX = [f"{i:02X}" for i in range(128)]


def hms(ms: int) -> str:
    s = ms // 1000
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
