// Package sim is ibscript's embedded InfiniBand fabric simulator, the
// default backend: a fabric loaded from an ibsim / ibnetdiscover topology
// file (or the bundled default fabric) whose every port has an SMA and a
// PMA, with directed-route SMPs forwarded hop by hop as IBA 14.2.2 says and
// LID-routed packets following the switches' linear forwarding tables.
//
// # Purpose
//
// New builds a Fabric from a topo.Fabric, Load from a file and Default from
// the bundled two-level fat tree. By default the fabric comes up as OpenSM
// leaves it: LIDs assigned, min-hop forwarding tables, cabled ports ACTIVE,
// an SM (SMInfo Master) on the SM node's port. Options.Bare starts it as
// ibsim does without an SM instead (ports INIT, no LIDs, empty tables), so
// a script can play the SM.
//
// Attach (or Open, as fabric.Fabric) gives a fabric.Transport on a CA port
// or a switch's port 0: a mux.Mux over the simulator's wire. Several
// transports may be open on one port, each an independent umad "file";
// unsolicited MADs go to whichever owns the method, and MADs that no SMA,
// PMA or agent handles are answered as the Linux kernel does (Get and Set
// with status 0x000C). A GMP sent with a GRH (fabric.Addr.GRH) is
// LID-routed as any other, dropped at a port whose GID it does not name,
// and arrives with the GRH ib_umad reports (the sender's GID, gid_index 0,
// hop limit 255, the traffic class and flow label); the SMA's, PMA's and
// SA's answers to it carry one back. Each port's GID table holds index 0
// only (GIDPrefix and PortGUID); SMPs take no GRH.
//
// CA ports may have IPoIB addresses (fabric.IPoIB): from a topology file's
// `# ipoib "node"[port] 10.0.0.1 fd00::1` lines (comments to ibsim), or
// SetIPoIB. The user-space RDMA CM resolves IP addresses through them.
//
// A link runs at the widest width and the fastest speed both its ends
// enable, as link training does on hardware, at start and after a
// PortInfo Set of either end's enabled masks. ibsim does so at start, but
// its PortInfo Set takes the active width and speed from the mask the
// Set writes alone and forces them on both ends: once OpenSM writes a
// switch port's enabled widths back, a link whose switch end enables 1x
// or 8x and whose CA end 1x only shows 8x under ibsim + OpenSM, 1x here
// (tests/topologies/net.odd-width; the tools print what the fabric
// answers, so ibscript's on ibsim: print ibsim's 8X as the C tools do).
//
// OpenSM drops the NodeInfo of a node whose node or port GUID is zero
// (osm_ni_rcv_process, ERR 0D16, 0D17), and the embedded SM does the
// same: such a node gets no LID, its links stay in Init, the LIDs after
// it are one lower, and a GMP (PerfMgt, CC) cannot reach it. ibsim, and
// this loader, give the first router of a file without an rtguid= line
// node GUID 0 (the routers after it take GUIDs from there up); a
// topology that means a working router gives it one (rtguid=0x...).
//
// Node and port attributes mirror ibsim 0.10's defaults (NodeInfo,
// PortInfo, SwitchInfo), so smpquery-style answers match a real ibsim +
// OpenSM fabric where the SM's configuration does not enter. So do the
// tables ibsim keeps per port (tables.go): SLtoVLMappingTable (SL i on VL
// i, SL 15 on VL 7, per input/output pair on switches), VLArbitrationTable
// (ibsim's weights, its cap and block rules) and Mellanox's
// ExtendedPortInfo (zero), all settable, and the switches'
// MulticastForwardingTable (empty, as OpenSM leaves it on ibsim: its IPoIB
// broadcast group has no members); and the PMA detail groups ibsim
// answers (PortRcvErrorDetails, PortXmitDiscardDetails, PortOpRcvCounters,
// PortFlowCtlCounters, PortVLOpPackets, PortVLOpData,
// PortVLXmitFlowCtlUpdateErrors, PortVLXmitWaitCounters: zero, as nothing
// in ibsim moves them). tests/ibsimdiff checks these against ibsim on the
// same file.
//
// Every switch and every CA port has a Congestion Control agent (class
// 0x21, cc.go):
// ClassPortInfo, CongestionInfo (a CA's ControlTableCap 2), CongestionLog
// (empty; LogType 1 on switches, 2 on CAs), Timestamp (a clock in 1.024
// us units), and the settable CongestionKeyInfo, SwitchCongestionSetting,
// SwitchPortCongestionSetting (32 ports a block), CACongestionSetting and
// CongestionControlTable (two blocks), all at IBA's reset values (zero)
// until a Set; a Set stores the attribute whole. Once CongestionKeyInfo
// holds a CC_Key, a request with another is dropped and counted in
// CC_KeyViolations, except a Get while CC_KeyProtectBit is clear (answered,
// CongestionKeyInfo's CC_Key reading 0); the lease period never expires.
//
// As ibsim, the PMA counts the MADs that cross each port. Beyond ibsim,
// SetTraffic gives the links a deterministic background load (traffic.go)
// so that counters move as on a busy fabric; it is off unless asked.
//
// Beyond ibsim, the SMA and PMA also answer what a current HCA or switch
// does (portext.go, pmaext.go), so that every attribute of mad/smp,
// mad/perf and mad/cc answers on the node kinds that carry it: LedInfo
// (settable; off) and PortInfoExtended (the FEC modes: each port supports
// no FEC and FireCode at FDR, those and RS-FEC and low-latency RS-FEC at
// EDR, RS-FEC (544,514) and low-latency RS-FEC at HDR and NDR, all
// enabled until a Set; a link runs the most preferred mode both ends
// enable: RS-FEC on EDR, RS-FEC (544,514) on HDR and NDR, none below
// FDR), announced in PortInfo (IsLEDInfoSupported,
// IsPortInfoExtendedSupported); PortXmitDataSL and PortRcvDataSL (the
// data words per SL, growing with PortXmitData and PortRcvData: each MAD
// on its SL, the background load on SL 0; a Set clears the SLs
// CounterSelect selects; SetCounter does not reach them);
// PortExtendedSpeedsCounters (zero: no lane errors are simulated; its
// RS-FEC layout on ports running RS-FEC, as the PMA's
// IsRSFECCountersSupported says); the congestion counters of IBA Annex
// A10, zero as nothing congests: SwPortVLCongestion, PortXmitConCtrl and
// PortVLXmitTimeCong on switches, PortRcvConCtrl, PortSLRcvFECN and
// PortSLRcvBECN on CAs (the other kind answers 0x000C); and the sampling
// engine, PortSamplesControl/PortSamplesResult (one per PMA: IBA's five
// mandatory counter selects on up to 15 counters of 32 bits over
// SampleInterval ticks of one symbol time after SampleStart, on the
// background load's clock). Options.IbsimStrict turns all of this off,
// for the tests that compare the simulator with ibsim.
//
// XDR: a topology's extended speed bit 32 (extspeed=0x2f, a port's e=,
// ibnetdiscover's "4xXDR"; libibnetdisc's aggregation of PortInfo's
// LinkSpeedExt*2 fields above LinkSpeedExt's) makes a port that can run
// XDR: LinkSpeedExtSupported2 and LinkSpeedExtEnabled2 1,
// IsExtendedSpeeds2Supported in CapabilityMask2 (CA ports, switch port
// 0), and on a link both ends of which can, LinkSpeedExtActive2 1 with
// LinkSpeedExtActive 0 (so tools that predate XDR, infiniband-diags 44
// among them, see the link's LinkSpeedActive: QDR), RS-FEC (544,514)
// in PortInfoExtended, and the background load at 200 Gb/s a lane.
// PortInfo Sets keep a port's XDR ability (LinkSpeedExtEnabled2 is not
// settable). The SA's PathRecord rate of a 4x XDR path is 23 (800
// Gb/s), 1x and 2x XDR 17 and 21; 8x and 12x XDR, which have no rate
// code, give the fastest, 24 (1200 Gb/s).
//
// The SM's port also hosts the SA (class 0x03, sa.go, its records one
// fill per kind in sarecords.go): Get of ClassPortInfo; Get and GetTable
// of NodeRecord, PortInfoRecord, PathRecord, LinkRecord,
// SwitchInfoRecord, LinearForwardingTableRecord, GUIDInfoRecord,
// P_KeyTableRecord, SMInfoRecord, SLtoVLMappingTableRecord,
// VLArbitrationTableRecord, MulticastForwardingTableRecord and
// MCMemberRecord with OpenSM's rules (a switch's SLtoVL records for every
// input/output pair, port 0 included, a CA port's one with both port
// numbers 0; VL arbitration blocks 1 to 4 of every switch port and of a
// CA's own port whatever port is asked; MFT blocks up to the last holding
// a port, every position of each; the IPoIB broadcast group of the
// default partition, which OpenSM creates, without members); GetMulti of
// MultiPathRecord and PathRecord; ServiceRecord has no records (no
// service is ever registered).
// Set(InformInfo) subscribes to traps with OpenSM's rules (inform.go:
// security traps 256-259 only with an SM_Key, unsubscribing nothing is
// ERR_REQ_INVALID, InformInfoRecords list the subscriptions, their QPN
// zero for a requester without an SM_Key), and the SM forwards to each
// matching subscription, as Report(Notice) resent until a ReportResp
// answers it, the traps OpenSM sends when SetLink changes a link: 128 from
// each switch at its ends, then 65 (64) for every endport the SM stops
// (starts) reaching; and 144 when AddSM sets IsSM on a CA port (as ibsim's
// SET_ISSM). The SA keeps OpenSM's SM_Key rules (DefaultSAKey,
// Options.SAKey): requests with another non-zero key get no answer,
// P_KeyTableRecords only with the key, PortInfoRecords' M_Key zeroed
// without it, answers with SM_Key 0. Records are computed from the live state with
// component-mask matching, tables sent as RMPP transfers (mad/rmpp) whose
// segments are delivered after the fabric mutex is released.
//
// # Concurrency
//
// A Fabric is safe for concurrent use. A MAD is processed synchronously
// inside Transmit, under one fabric-wide mutex; the MAD that results (a
// response, or a request for an agent) is handed to the destination port's
// mux with Deliver after the mutex is released. The package starts no
// goroutines (the muxes' timers, and those of MADs Faults.Delay holds
// back, are time.AfterFunc timers; Close stops the latter).
//
// # Ownership
//
// Whoever calls New, Load or Default must Close the Fabric; Close closes
// every transport attached to it. Transports may also be closed one by
// one.
//
// # Errors
//
// Bad topologies, unknown nodes and out-of-range ports are errors naming
// the node and port. After Close, transports and Attach return errors
// wrapping net.ErrClosed.
//
// # Differences from ibsim
//
// The directed-route rules are those of Linux smi.c (a CA discards a path
// whose first hop is not its own port; ibsim follows it), DrSLID LID-routed
// first legs are supported (ibsim refuses them), DR SMPs with a
// non-permissive DrDLID are dropped, Set on Get-only attributes answers
// status 0x000C (ibsim 0x0008), a port number past the node's in an SLtoVL
// or VL arbitration modifier is status 0x001C (ibsim answers from whatever
// port follows the node's in its port array: another node's), and the
// switches' trap 128 goes straight to the SA's subscribers (no Trap SMP to
// the SM, no trap 144 or other SMA traps; OpenSM's P_Key checks of
// subscriptions are not made: every port is in the default partition); no
// multicast group is ever joined, so the MFTs stay empty
// unless Set. The SA's SLtoVL and VL arbitration records hold zero tables,
// as OpenSM's do with QoS off (its copies of tables it never reads; the
// SMA answers ibsim's defaults). Its MFT records list the switches' tables,
// OpenSM's the tables it programmed: the same (none) until a script Sets
// one. On a topology with a router the
// embedded SM also differs from OpenSM: it gives the router's ports LIDs
// and brings its links up, which OpenSM does not (they stay in Init,
// without LIDs), so LIDs after it differ. ibsim has no Congestion Control
// agent: it hands a class 0x21 MAD to the SMA handler of the same
// attribute ID (its dispatcher looks at the class's low four bits only),
// which answers with the request's own data and the SMA's status
// (CongestionInfo, SwitchCongestionSetting, SwitchPortCongestionSetting,
// CACongestionSetting and CongestionControlTable read zero on every node;
// CongestionKeyInfo reads zero on a switch and is refused on a CA, as
// SwitchInfo; Timestamp is refused, as VLArbitrationTable block 0) and
// drops ClassPortInfo and CongestionLog; a CC Set there reaches the SMA's
// Set handler of that ID. The embedded agent answers as IBA describes
// instead, a deliberate difference.
package sim
