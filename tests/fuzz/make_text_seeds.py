#!/usr/bin/env python3
"""make_text_seeds.py: writes the seed corpora for fuzz_sanitize, fuzz_redact and fuzz_report
(tests/fuzz/seeds/{sanitize,redact,report}) in their input formats (see the top of each fuzzer)."""
import os
import sys

TERMINAL, LINE, XML_TEXT, XML_ATTR, MESSAGE, JSON = 0, 1, 2, 3, 4, 5
FLAG_MAX = 0x08
INSERT = 0xFE  # fuzz_redact: INSERT b [start len] copies (part of) secret b & 3

KEY = b"3f9c1a7be2d64c0598a1f0e7c3b24d6a9e8f7061"  # 40 bytes: the longest secret the fuzzer takes
CANARY = b"0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f607182939"
ENV = b"/opt/private-token-path"


def sanitize(mode, text, max_bytes=None):
    if max_bytes is None:
        return bytes([mode]) + text
    return bytes([mode | FLAG_MAX, max_bytes]) + text


SANITIZE = {
    "terminal_csi_osc": sanitize(TERMINAL, b"\x1b[31mred\x1b[0m \x1b]0;PWNED\x07title \x1b]8;;x\x1b\\link"),
    "terminal_unterminated": sanitize(TERMINAL, b"seen\x1b]0;then the rest\ncsi\x1b[12;3"),
    "terminal_c1_join": sanitize(TERMINAL, b"\xc2\x07\x85 \xc2\x9b31m \x9b31m \xc2\x1b[m\x85"),
    "terminal_nul_utf8": sanitize(TERMINAL, "out\0put caf\u00e9 \U0001F642\ttab\n".encode()),
    "line_breaks": sanitize(LINE, b"IRkernel ignores\ninterrupt_request \x1b[31m\r\t\x7f"),
    "line_cut": sanitize(LINE, "ab\u00e9cdefgh\u20ac".encode(), 4),
    "xml_text": sanitize(XML_TEXT, b"<a href=\"x\">&amp;'</a>\x01\xef\xbf\xbe\xed\xa0\x80"),
    "xml_attr": sanitize(XML_ATTR, b"l1\nl2\tx\r&#10; \"q\" 'a'"),
    "invalid_utf8": sanitize(TERMINAL, b"\xc0\xaf\xe0\x80\xaf\xf4\x90\x80\x80\xf8\x88\x80\x80\x80\xc3"),
    "xml_cut": sanitize(XML_ATTR, b"&&&&<<<<>>>>", 5),
    "message_forged_lines": sanitize(MESSAGE, b"the cell raised x\nPASS forged\r\x1b[2K\tPASS \\n"),
    "terminal_bidi": sanitize(TERMINAL, "a\u202eevil\u2066x\u2069\u2028b\u200f".encode()),
    "json_log_bytes": sanitize(JSON, b"Traceback\xff\xfe \xc3\x28 caf\xc3\xa9 \xed\xa0\x80\x00tail"),
}


def redact(secrets, text, tokens=0):
    """secrets: up to 4 byte strings; tokens: a bitmask of which are tokens."""
    out = bytes([(len(secrets) - 1) | (tokens << 2)])
    for s in secrets:
        out += bytes([len(s)]) + s
    return out + text


def insert(index, upper=False, part=None):
    b = index | (4 if upper else 0) | (8 if part else 0)
    return bytes([INSERT, b]) + (bytes(part) if part else b"")


REDACT = {
    "whole_and_upper": redact([KEY, ENV], b"KEY=" + insert(0) + b" U=" + insert(0, upper=True) + b" env " + insert(1), 0b01),
    "halves": redact([KEY], b"A=" + insert(0, part=(0, 20)) + b" B=" + insert(0, part=(20, 20)) + b"!", 0b01),
    "fragment_at_min": redact([KEY], b"x" + insert(0, part=(3, 12)) + b"y" + insert(0, part=(9, 11)) + b"z", 0b01),
    "adjacent_two": redact([KEY, CANARY], insert(0) + insert(1) + b" tail", 0b11),
    "overlapping_whole": redact([b"abab-secret-abab"], b"x abab-secret-abab-secret-abab y"),
    "short_token": redact([b"abcdef0123"], b"x abcdef0123 y abcdef012", 0b1),
    "nul_in_text": redact([ENV, KEY], b"pre\0" + insert(0) + b"\0" + insert(1, upper=True), 0b10),
    "no_secret": redact([KEY, ENV], b"ordinary text with 0123456789ab and /opt/other", 0b01),
    "forged_marker": redact([KEY], b"[redacted:s0] " + insert(0, part=(5, 30)) + b" [redacted:s0", 0b1),
}


# fuzz_report: byte 0's flags, then NUL-ended strings in build()'s order.
TWO, SANDBOX, IMAGE, ERROR, COMPLETE, UNTESTED = 0x01, 0x08, 0x10, 0x20, 0x40, 0x80


def checks(n):
    return (n - 1) << 1


def report(flags, *strings):
    return bytes([flags]) + b"\0".join(strings)


FORGED = b"ok\nPASS         forged  sandbox.backend  forged\rPASS: full boundary\x1b]0;PWNED\x07\x1b[2J"
REPORT = {
    "plain_pass": report(COMPLETE | checks(2), b"python3", b"Python 3", b"python", b"team-a", b"ipykernel", b"6.29",
                         b"python", b"sandbox.backend", b"p", b"bubblewrap 0.8.0", b"boundary.network", b"p", b"lo only"),
    "forged_lines": report(COMPLETE | SANDBOX | checks(1), b"bwrap\n", b"0.8\r", b"/usr/bin/bwrap\x1b[2J", b"",
                           b"k\nPASS x", FORGED, b"py\u202ethon".decode("unicode_escape").encode(), b"t", FORGED,
                           b"1\n", b"python", b"id\nPASS", b"f", FORGED),
    "raw_bytes": report(COMPLETE | TWO | checks(3) | ERROR, b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\xc2\x85",
                        b"Traceback \xff\xfe\xc3\x28", b"\x9b31m", b"\xf4\x90\x80\x80", b"r", b"a", b"\x06status",
                        b"\xc0\xaf", b"b", b"u", b"\xe2\x80\xa8", b"c", b"d", b"x"),
    "xml_specials": report(UNTESTED | SANDBOX | IMAGE | checks(2), b"<b>", b"&amp;", b"\"q\"", b"'a'", b"]]>",
                           b"<!--", b"&#0;", b"\xef\xbf\xbe", b"<x>", b"a&b", b"c<d", b"e>f", b"<testcase>",
                           b"</testsuite>", b"1&2", b"s", b"u", b"<failure>", b"n", b"&"),
    "same_strings": report(TWO | checks(1), b"k", b"k", b"k", b"k", b"k", b"k", b"R", b"k", b"p", b"k", b"k", b"k",
                           b"k", b"k", b"k", b"k", b"k", b"f", b"k"),
}


def main():
    top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
    for name, corpus in (("sanitize", SANITIZE), ("redact", REDACT), ("report", REPORT)):
        d = os.path.join(top, name)
        os.makedirs(d, exist_ok=True)
        for seed, data in corpus.items():
            with open(os.path.join(d, seed), "wb") as f:
                f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
