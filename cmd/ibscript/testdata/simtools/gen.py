#!/usr/bin/env python3
"""Writes the *.golden files of TestToolsBeyondIbsim: what infiniband-diags
44 prints for each query, its text rendered by libibmad 44 itself (the
field tables and dump functions perfquery and smpquery print with) from
the attribute data the embedded simulator answers, with the tool's header
line (perfquery.c's "# %s counters: %s port %d", smpquery.c's headers).
ibsim refuses these attributes, so 44 cannot be run against it; the data
below is what sim's package doc says the simulator answers at each place
of the default fabric (the test fails if the tool's output differs, so a
wrong byte here or in the simulator shows). Run from this directory on a
host with libibmad.so.5 (Debian libibmad5 44.0): python3 gen.py
"""
import ctypes
import struct

lib = ctypes.CDLL("libibmad.so.5")


def put(data, bit, width, value):
    """Writes value at IBA bit offset bit (bit 0: MSB of byte 0)."""
    n = int.from_bytes(data, "big")
    total = len(data) * 8
    shift = total - bit - width
    n &= ~(((1 << width) - 1) << shift)
    n |= (value & ((1 << width) - 1)) << shift
    data[:] = n.to_bytes(len(data), "big")


def dump(fn, data):
    buf = ctypes.create_string_buffer(8192)
    val = ctypes.create_string_buffer(bytes(data) + bytes(256))
    getattr(lib, fn)(buf, len(buf), val, len(data))
    return buf.value.decode()


def pma(port, fields=()):
    d = bytearray(192)
    put(d, 8, 8, port)  # PortSelect
    for bit, width, value in fields:
        put(d, bit, width, value)
    return d


cases = []

# Data words per SL at leaf01 (LID 2) port 1 when perfquery asks them from
# node001 (LID 1): the ClassPortInfo request and answer and the request
# itself crossed that port (72 words a MAD, on SL 0).
cases.append(("xmtsl", "# PortXmitDataSL counters: Lid 2 port 1\n",
              "mad_dump_perfcounters_xmt_sl", pma(1, [(32, 32, 72)])))
cases.append(("rcvsl", "# PortRcvDataSL counters: Lid 2 port 1\n",
              "mad_dump_perfcounters_rcv_sl", pma(1, [(32, 32, 144)])))
cases.append(("xmtdisc", "# PortXmitDiscardDetails counters: Lid 2 port 1\n",
              "mad_dump_perfcounters_xmt_disc", pma(1)))
cases.append(("rcverr", "# PortRcvErrorDetails counters: Lid 2 port 1\n",
              "mad_dump_perfcounters_rcv_err", pma(1)))
# 4X QDR: no FEC, the layout without RS-FEC, no lane errors.
cases.append(("extspeeds", "# PortExtendedSpeedsCounters counters: Lid 2 port 1\n",
              "mad_dump_port_ext_speeds_counters", pma(1)))
# The congestion counters: zero (nothing congests); switch ones at
# leaf01, CA ones at node001.
for name, fn in [("SwPortVLCongestion", "sw_port_vl_congestion"),
                 ("PortXmitConCtrl", "xmit_con_ctrl"),
                 ("PortVLXmitTimeCong", "vl_xmit_time_cong")]:
    cases.append((name, "# %s counters: Lid 2 port 1\n" % name,
                  "mad_dump_perfcounters_" + fn, pma(1)))
for name, fn in [("PortRcvConCtrl", "rcv_con_ctrl"),
                 ("PortSLRcvFECN", "sl_rcv_fecn"),
                 ("PortSLRcvBECN", "sl_rcv_becn")]:
    cases.append((name, "# %s counters: Lid 1 port 1\n" % name,
                  "mad_dump_perfcounters_" + fn, pma(1)))
# The sampling engine before any sample: 32-bit counters (CounterWidth
# 4), each of the 15 taking any select (CounterMask 1).
cases.append(("smplctl", "# PortSamplesControl: Lid 2 port 1\n",
              "mad_dump_portsamples_control",
              pma(1, [(29, 3, 4), (34, 3, 1), (37, 27, 0o111111111), (65, 15, 0o11111)])))

# PortInfoExtended of leaf01 port 1: FEC fields valid, none active at
# QDR, each speed's supported modes all enabled. libibmad 44 reads the
# HDR and NDR fields at other halfwords than IBA places them (its table
# gives them without BITSOFFS): this is what smpquery 44 prints.
pie = bytearray(64)
for bit, width, value in [(0, 32, 1), (32, 16, 0), (48, 16, 0x3), (64, 16, 0x3),
                          (80, 16, 0xf), (96, 16, 0xf), (112, 16, 0x18), (128, 16, 0x18),
                          (144, 16, 0x18), (160, 16, 0x18)]:
    put(pie, bit, width, value)
cases.append(("pie", "# Port info Extended: Lid 2 port 1\n", "mad_dump_portinfo_ext", pie))
cases.append(("mepi", "# MLNX ext Port info: Lid 2 port 1\n", "mad_dump_mlnx_ext_port_info", bytearray(64)))

# net.edr (4X EDR): RS-FEC runs on every link, so perfquery -T prints the
# RS-FEC layout.
cases.append(("extspeeds-rsfec", "# PortExtendedSpeedsCounters with RS-FEC Active counters: Lid 2 port 1\n",
              "mad_dump_port_ext_speeds_counters_rsfec_active", pma(1)))

for name, header, fn, data in cases:
    with open(name + ".golden", "w") as f:
        f.write(header + dump(fn, data))
