#!/usr/bin/env python3
"""Writes libibmad.golden: what rdma-core's libibmad (the field table
ibccquery prints with) shows for each CC attribute of testdata/pattern,
each dumped as ibccquery dumps it. Run from mad/cc/testdata on a host with
libibmad.so.5 (Debian libibmad5). The input is
byte i = i*37+11 (mod 256), as golden_test.go builds it: python3 libibmad_golden.py > libibmad.golden
"""
import ctypes

lib = ctypes.CDLL("libibmad.so.5")
data = bytes((i * 37 + 11) & 0xFF for i in range(224))


def dump(fn, off, size):
    buf = ctypes.create_string_buffer(4096)
    val = ctypes.create_string_buffer(data[off:off + size] + bytes(256))
    getattr(lib, fn)(buf, len(buf), val, size)
    return buf.value.decode()


out = []


def attr(name, *parts):
    out.append("# " + name)
    for fn, off, size in parts:
        text = dump(fn, off, size)
        out.append(text.rstrip("\n"))


attr("CongestionInfo", ("mad_dump_cc_congestioninfo", 0, 192))
attr("CongestionKeyInfo", ("mad_dump_cc_congestionkeyinfo", 0, 192))
attr("CongestionLog",
     ("mad_dump_cc_congestionlog", 0, 224), ("mad_dump_cc_congestionlogswitch", 0, 224),
     *[("mad_dump_cc_congestionlogentryswitch", 40 + i * 12, 12) for i in range(15)])
attr("CongestionLogCA",
     ("mad_dump_cc_congestionlog", 0, 224), ("mad_dump_cc_congestionlogca", 0, 224),
     *[("mad_dump_cc_congestionlogentryca", 12 + i * 16, 16) for i in range(13)])
attr("SwitchCongestionSetting", ("mad_dump_cc_switchcongestionsetting", 0, 192))
attr("SwitchPortCongestionSetting",
     *[("mad_dump_cc_switchportcongestionsettingelement", j * 4, 4) for j in range(32)])
attr("CACongestionSetting", ("mad_dump_cc_cacongestionsetting", 0, 192),
     *[("mad_dump_cc_cacongestionentry", 4 + i * 8, 8) for i in range(16)])
attr("CongestionControlTable", ("mad_dump_cc_congestioncontroltable", 0, 192),
     *[("mad_dump_cc_congestioncontroltableentry", 4 + j * 2, 192 - 4 - j * 2) for j in range(64)])
attr("Timestamp", ("mad_dump_cc_timestamp", 0, 192))
print("\n".join(out))
