#!/usr/bin/env python3
"""Writes libibmad.golden: what rdma-core's libibmad (the field tables
perfquery prints with) shows for PortExtendedSpeedsCounters in both its
layouts, the one perfquery -T prints by default and the one it prints with
RS-FEC active. Run from mad/perf/testdata on a host with libibmad.so.5
(Debian libibmad5). The input is byte i = i*37+11 (mod 256), as
golden_test.go builds it: python3 libibmad_golden.py > libibmad.golden
"""
import ctypes

lib = ctypes.CDLL("libibmad.so.5")
data = bytes((i * 37 + 11) & 0xFF for i in range(192))


def dump(fn):
    buf = ctypes.create_string_buffer(8192)
    val = ctypes.create_string_buffer(data + bytes(256))
    getattr(lib, fn)(buf, len(buf), val, len(data))
    return buf.value.decode().rstrip("\n")


print("# PortExtendedSpeedsCounters")
print(dump("mad_dump_port_ext_speeds_counters"))
print("# PortExtendedSpeedsCountersRSFEC")
print(dump("mad_dump_port_ext_speeds_counters_rsfec_active"))
