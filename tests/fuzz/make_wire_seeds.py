#!/usr/bin/env python3
"""make_wire_seeds.py: writes the seed corpus for fuzz_wire (tests/fuzz/seeds/wire) in its input format."""
import hashlib
import hmac
import json
import os
import struct
import sys

KEY = b"fuzz-key-0123456789abcdef"  # must match FUZZ_KEY in fuzz_wire.c
FLAG_SIGN = 0x01
FLAG_UNSIGNED = 0x02
DELIM = b"<IDS|MSG>"


def pack(flags, frames):
    out = bytes([flags])
    for f in frames:
        out += struct.pack(">H", len(f)) + f
    return out


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def message(parts, ids=(), buffers=(), key=KEY, signature=None):
    if signature is None:
        signature = hmac.new(key, b"".join(parts), hashlib.sha256).hexdigest().encode() if key else b""
    return list(ids) + [DELIM, signature] + list(parts) + list(buffers)


def header(msg_type="execute_request", msg_id="9f1c8e52-3b7a-4c1d-9e0f-2a6b5c4d3e21"):
    return dumps({"msg_id": msg_id, "msg_type": msg_type, "username": "kb", "session": "s",
                  "date": "2026-01-01T00:00:00.000000Z", "version": "5.3"})


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "seeds", "wire")
    os.makedirs(outdir, exist_ok=True)
    parent = dumps({"msg_id": "11111111-2222-4333-8444-555555555555", "msg_type": "execute_request"})
    content = dumps({"code": "print('héllo')\n", "silent": False, "user_expressions": {}})
    status = dumps({"execution_state": "idle"})
    at_limit = dumps({"a": [[[[[[[[[[1]]]]]]]]]]})  # depth 12: the fuzzer's max_json_depth
    too_deep = dumps({"a": [[[[[[[[[[[1]]]]]]]]]]]})
    seeds = {
        "valid_signed": pack(0, message([header(), b"{}", b"{}", content])),
        "valid_resign": pack(FLAG_SIGN, message([header(), parent, b"{}", content], signature=b"0" * 64)),
        "identities_buffers": pack(0, message([header("comm_msg"), parent, b"{}", b"{}"],
                                              ids=[b"\x00k\x8bEg", b"route-2"], buffers=[b"\xff\x00\x01", b""])),
        "unsigned": pack(FLAG_UNSIGNED, message([header("status"), parent, b"{}", status], key=b"")),
        "unsigned_with_key": pack(0, message([header(), b"{}", b"{}", content], key=b"")),
        "bad_signature": pack(0, message([header(), b"{}", b"{}", content], signature=b"a" * 64)),
        "short_signature": pack(0, message([header(), b"{}", b"{}", content], signature=b"abc")),
        "depth_at_limit": pack(FLAG_SIGN, message([header(), b"{}", b"{}", at_limit])),
        "depth_over_limit": pack(FLAG_SIGN, message([header(), b"{}", b"{}", too_deep])),
        "embedded_nul": pack(FLAG_SIGN, message([header(), b"{}", b"{}", b'{"a":"x\x00y"}'])),
        "not_object": pack(FLAG_SIGN, message([header(), b"[]", b"{}", b"{}"])),
        "trailing": pack(FLAG_SIGN, message([header(), b"{}", b"{} x", b"{}"])),
        "no_delimiter": pack(0, [b"id", b"sig", header(), b"{}", b"{}", b"{}"]),
        "too_few": pack(FLAG_SIGN, [DELIM, b"", header(), b"{}"]),
        "many_frames": pack(FLAG_SIGN, message([header(), b"{}", b"{}", b"{}"], buffers=[b"b"] * 30)),
        "missing_msg_id": pack(FLAG_SIGN, message([dumps({"msg_type": "x"}), b"{}", b"{}", b"{}"])),
    }
    for name, data in seeds.items():
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
