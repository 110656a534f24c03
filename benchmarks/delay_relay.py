#!/usr/bin/env python3
"""A TCP relay that adds a fixed one-way delay, to stand for pmcds across a network.

    delay_relay.py [--delay SECONDS] [--target HOST:PORT]

Listens on an ephemeral port of 127.0.0.1 (printed on the first line of stdout), and
relays every accepted connection to the target (default: the local pmcd), holding each
chunk of bytes `delay` seconds in each direction before passing it on (order kept, no
bandwidth limit): a round trip through it takes at least 2 * delay. Runs until killed
or its stdin closes. Standard library only; run it in its own process so that its work
does not share a CPU-bound interpreter with the client being measured.
"""

import argparse
import asyncio
import sys
import time


async def _pump(reader, writer, delay):
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    task = asyncio.ensure_future(deliver())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            queue.put_nowait((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((0.0, None))
    try:
        await task
    except (ConnectionError, OSError):
        pass


async def _serve(delay, target_host, target_port):
    async def handle(creader, cwriter):
        try:
            sreader, swriter = await asyncio.open_connection(target_host, target_port)
        except OSError:
            cwriter.close()
            return
        await asyncio.gather(_pump(creader, swriter, delay), _pump(sreader, cwriter, delay),
                             return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    sys.stdout.write("%d\n" % port)
    sys.stdout.flush()
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    async with server:
        await stdin_closed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delay", type=float, default=0.001)
    ap.add_argument("--target", default="127.0.0.1:44321")
    args = ap.parse_args()
    host, _, port = args.target.rpartition(":")
    asyncio.run(_serve(args.delay, host, int(port)))


if __name__ == "__main__":
    main()
