#!/usr/bin/python3
"""bench/wire_session.py: the same wire work as bench/wire_bench.c through jupyter_client's Session.

Builds, signs (HMAC-SHA256), sends, receives, verifies and parses execute_request messages over a
zmq PAIR socket pair on ipc, 64 in flight at a time. Prints one JSON object.
Usage: /usr/bin/python3 bench/wire_session.py MESSAGES CODE_FILE
"""
import json
import os
import shutil
import sys
import tempfile
import time

import zmq
from jupyter_client.session import Session

WINDOW = 64


def main():
    total = int(sys.argv[1])
    with open(sys.argv[2]) as f:
        code = f.read()
    d = tempfile.mkdtemp(prefix="kbound-wire-session-")
    ctx = zmq.Context()
    rx, tx = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    rx.setsockopt(zmq.RCVHWM, 0)
    tx.setsockopt(zmq.SNDHWM, 0)
    rx.bind("ipc://%s/s" % d)
    tx.connect("ipc://%s/s" % d)
    key = b"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
    sender = Session(key=key, signature_scheme="hmac-sha256", username="bench")
    receiver = Session(key=key, signature_scheme="hmac-sha256", username="bench")
    done = bad = 0
    content_bytes = 0
    t0 = time.perf_counter()
    while done < total:
        batch = min(WINDOW, total - done)
        for _ in range(batch):
            content = {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                       "allow_stdin": False, "stop_on_error": False}
            sender.send(tx, "execute_request", content)
        for _ in range(batch):
            # recv verifies the signature (compare_digest) and parses all four JSON parts.
            _, msg = receiver.recv(rx, mode=0, content=True)
            if msg is None or msg["header"]["msg_type"] != "execute_request":
                bad += 1
            elif not content_bytes:
                content_bytes = len(json.dumps(msg["content"], separators=(",", ":")))
        done += batch
    elapsed = time.perf_counter() - t0
    rx.close(0)
    tx.close(0)
    ctx.term()
    shutil.rmtree(d, ignore_errors=True)
    print(json.dumps({"impl": "jupyter_client.Session", "messages": done, "failed": bad,
                      "content_bytes": content_bytes, "seconds": round(elapsed, 6),
                      "msgs_per_sec": round(done / elapsed, 1)}))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
