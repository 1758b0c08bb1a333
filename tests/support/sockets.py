"""Raw loopback connections that keep what the server sent when it resets the connection.

A server that answers and closes while the client is still sending (a slow body, a body over
the limit, a client past the connection cap) resets the connection where its socket held bytes
it did not read, or where more arrive after the close. The client's next read or write then fails,
and ``asyncio.StreamReader`` raises that error before handing out the bytes it had already
received: on a loaded host, where the client reads late, the answer is lost. ``Received`` keeps
every byte as it arrives, so a test reads the answer the server sent before the reset.
"""

from __future__ import annotations

import asyncio
import contextlib

__all__ = ["Received", "open_received", "until_closed"]


class Received(asyncio.StreamReader):
    """A stream reader that keeps every byte the server sent in ``received``."""

    def __init__(self) -> None:
        super().__init__()
        self.received = bytearray()

    def feed_data(self, data: bytes) -> None:
        self.received += data
        super().feed_data(data)


async def open_received(port: int, host: str = "127.0.0.1") -> tuple[Received, asyncio.StreamWriter]:
    """``asyncio.open_connection``, with a ``Received`` reader."""
    loop = asyncio.get_running_loop()
    reader = Received()
    transport, protocol = await loop.create_connection(lambda: asyncio.StreamReaderProtocol(reader), host, port)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)


async def until_closed(reader: Received, wait: float = 60.0) -> bytes:
    """Every byte the server sent until it closed the connection, by a FIN or a reset (``wait`` is
    a hang guard)."""
    with contextlib.suppress(ConnectionError):
        await asyncio.wait_for(reader.read(), wait)
    return bytes(reader.received)
