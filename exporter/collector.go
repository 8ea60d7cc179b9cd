package exporter

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// ageName is the sweep age gauge, the one series renewed at each scrape.
const ageName = "infiniband_exporter_sweep_age_seconds"

// collectorName is the collector label of the exporter's own gauges, as
// treydock/infiniband_exporter names its switch collector.
const collectorName = "switch"

// Where a portCounter's value comes from.
const (
	fromExt     = iota // PortCountersExtended
	fromPC             // PortCounters
	fromRcvErr         // PortRcvErrorDetails
	fromDiscard        // PortXmitDiscardDetails
)

// portCounter is one per-port counter series: its name after
// "infiniband_switch_port_" (or "infiniband_hca_port_"), the IBA field it
// reads and from which attribute.
type portCounter struct {
	name  string
	field string // the IBA field name (the counter label of saturated)
	from  int
	get   func(*PortSample) uint64
	// needs is the PMA capability the field needs (0: none); without
	// it, or with the capabilities unknown, the series is left out.
	needs uint16
	// width is the field's width in bits when it saturates there (the
	// PortCounters and detail counters), 0 for the 64-bit ones.
	width int
	// sel is the field's bit in CounterSelect (bits 0..15, as perfquery
	// -R's mask) and CounterSelect2 (bits 16..23: PortXmitWait is
	// CounterSelect2 bit 0, libibmad's mask bit 16) plus one; 0: not
	// resettable by --reset-saturated.
	sel uint8
}

// portCounters are the per-port series: each a counter of perf.Counters
// (the schema's: its series name, as treydock/infiniband_exporter names
// it, its width, CounterSelect bit and capability) and how a sample holds
// it (data in bytes: the wire counts 4-byte words).
var portCounters = []portCounter{
	perfCounter(fromExt, "PortXmitData", func(s *PortSample) uint64 { return s.Ext.PortXmitData * 4 }),
	perfCounter(fromExt, "PortRcvData", func(s *PortSample) uint64 { return s.Ext.PortRcvData * 4 }),
	perfCounter(fromExt, "PortXmitPkts", func(s *PortSample) uint64 { return s.Ext.PortXmitPkts }),
	perfCounter(fromExt, "PortRcvPkts", func(s *PortSample) uint64 { return s.Ext.PortRcvPkts }),
	perfCounter(fromExt, "PortUnicastXmitPkts", func(s *PortSample) uint64 { return s.Ext.PortUnicastXmitPkts }),
	perfCounter(fromExt, "PortUnicastRcvPkts", func(s *PortSample) uint64 { return s.Ext.PortUnicastRcvPkts }),
	perfCounter(fromExt, "PortMulticastXmitPkts", func(s *PortSample) uint64 { return s.Ext.PortMulticastXmitPkts }),
	perfCounter(fromExt, "PortMulticastRcvPkts", func(s *PortSample) uint64 { return s.Ext.PortMulticastRcvPkts }),
	perfCounter(fromPC, "SymbolErrorCounter", func(s *PortSample) uint64 { return uint64(s.PC.SymbolErrorCounter) }),
	perfCounter(fromPC, "LinkErrorRecoveryCounter", func(s *PortSample) uint64 { return uint64(s.PC.LinkErrorRecoveryCounter) }),
	perfCounter(fromPC, "LinkDownedCounter", func(s *PortSample) uint64 { return uint64(s.PC.LinkDownedCounter) }),
	perfCounter(fromPC, "PortRcvErrors", func(s *PortSample) uint64 { return uint64(s.PC.PortRcvErrors) }),
	perfCounter(fromPC, "PortRcvRemotePhysicalErrors", func(s *PortSample) uint64 { return uint64(s.PC.PortRcvRemotePhysicalErrors) }),
	perfCounter(fromPC, "PortRcvSwitchRelayErrors", func(s *PortSample) uint64 { return uint64(s.PC.PortRcvSwitchRelayErrors) }),
	perfCounter(fromPC, "PortXmitDiscards", func(s *PortSample) uint64 { return uint64(s.PC.PortXmitDiscards) }),
	perfCounter(fromPC, "PortXmitConstraintErrors", func(s *PortSample) uint64 { return uint64(s.PC.PortXmitConstraintErrors) }),
	perfCounter(fromPC, "PortRcvConstraintErrors", func(s *PortSample) uint64 { return uint64(s.PC.PortRcvConstraintErrors) }),
	perfCounter(fromPC, "LocalLinkIntegrityErrors", func(s *PortSample) uint64 { return uint64(s.PC.LocalLinkIntegrityErrors) }),
	perfCounter(fromPC, "ExcessiveBufferOverrunErrors", func(s *PortSample) uint64 { return uint64(s.PC.ExcessiveBufferOverrunErrors) }),
	perfCounter(fromPC, "VL15Dropped", func(s *PortSample) uint64 { return uint64(s.PC.VL15Dropped) }),
	perfCounter(fromPC, "QP1Dropped", func(s *PortSample) uint64 { return uint64(s.PC.QP1Dropped) }),
	perfCounter(fromPC, "PortXmitWait", func(s *PortSample) uint64 { return uint64(s.PC.PortXmitWait) }),
	perfCounter(fromRcvErr, "PortLocalPhysicalErrors", func(s *PortSample) uint64 { return uint64(s.RcvErr.PortLocalPhysicalErrors) }),
	perfCounter(fromRcvErr, "PortMalformedPacketErrors", func(s *PortSample) uint64 { return uint64(s.RcvErr.PortMalformedPacketErrors) }),
	perfCounter(fromRcvErr, "PortBufferOverrunErrors", func(s *PortSample) uint64 { return uint64(s.RcvErr.PortBufferOverrunErrors) }),
	// "dli" as treydock/infiniband_exporter spells it.
	perfCounter(fromRcvErr, "PortDLIDMappingErrors", func(s *PortSample) uint64 { return uint64(s.RcvErr.PortDLIDMappingErrors) }),
	perfCounter(fromRcvErr, "PortVLMappingErrors", func(s *PortSample) uint64 { return uint64(s.RcvErr.PortVLMappingErrors) }),
	perfCounter(fromRcvErr, "PortLoopingErrors", func(s *PortSample) uint64 { return uint64(s.RcvErr.PortLoopingErrors) }),
	perfCounter(fromDiscard, "PortInactiveDiscards", func(s *PortSample) uint64 { return uint64(s.Discard.PortInactiveDiscards) }),
	perfCounter(fromDiscard, "PortNeighborMTUDiscards", func(s *PortSample) uint64 { return uint64(s.Discard.PortNeighborMTUDiscards) }),
	perfCounter(fromDiscard, "PortSwLifetimeLimitDiscards", func(s *PortSample) uint64 { return uint64(s.Discard.PortSwLifetimeLimitDiscards) }),
	perfCounter(fromDiscard, "PortSwHOQLifetimeLimitDiscards", func(s *PortSample) uint64 { return uint64(s.Discard.PortSwHOQLifetimeLimitDiscards) }),
}

// linkDownedAt and xmitWaitAt are LinkDownedCounter's and
// PortXmitWait's places in portCounters (a port's flaps and its
// XmitWaitRatio come from their growth).
var (
	linkDownedAt = counterAt("LinkDownedCounter")
	xmitWaitAt   = counterAt("PortXmitWait")
)

// counterAt is the place of field's series in portCounters (a panic at
// start-up when there is none: a mistake of the code).
func counterAt(field string) int {
	i := slices.IndexFunc(portCounters, func(c portCounter) bool { return c.field == field })
	if i < 0 {
		panic("exporter: no series for " + field)
	}
	return i
}

// counterAttrs are the attributes of the from* sources.
var counterAttrs = [...]uint16{fromExt: perf.AttrPortCountersExtended, fromPC: perf.AttrPortCounters,
	fromRcvErr: perf.AttrPortRcvErrorDetails, fromDiscard: perf.AttrPortXmitDiscardDetails}

// perfCounter is the series of perf.Counters' counter field of the attribute
// of from, read from a sample by get. A counter the table does not hold,
// or gives no series name, is a mistake of the code (a panic at start-up).
func perfCounter(from int, field string, get func(*PortSample) uint64) portCounter {
	cs := perf.Counters()
	i := slices.IndexFunc(cs, func(c perf.Counter) bool { return c.Attr == counterAttrs[from] && c.Field.Name == field })
	if i < 0 || cs[i].Prom == "" {
		panic("exporter: perf.Counters has no series for " + field)
	}
	c := cs[i]
	width := c.Field.Width
	if width >= 64 {
		width = 0 // the 64-bit counters do not saturate
	}
	return portCounter{name: c.Prom, field: field, from: from, get: get, needs: c.Cap, width: width, sel: c.Select}
}

// served reports whether the sweep read c for ps (its attribute answered,
// the PMA offers the field).
func (c *portCounter) served(ps *PortSample) bool {
	var err error
	switch c.from {
	case fromExt:
		err = ps.ExtErr
	case fromPC:
		err = ps.PCErr
		if c.extended(ps) {
			err = nil
		}
	case fromRcvErr:
		err = ps.RcvErrErr
	default:
		err = ps.DiscardErr
	}
	return err == nil && (c.needs == 0 || (ps.CapsErr == nil && ps.Caps&c.needs == c.needs))
}

// additional are the PortCounters fields PortCountersExtended also
// carries at 64 bits where the PMA has Cap2AdditionalPortCounters.
var additional = map[string]func(*perf.PortCountersExtended) uint64{
	"SymbolErrorCounter":           func(x *perf.PortCountersExtended) uint64 { return x.SymbolErrorCounter },
	"LinkErrorRecoveryCounter":     func(x *perf.PortCountersExtended) uint64 { return x.LinkErrorRecoveryCounter },
	"LinkDownedCounter":            func(x *perf.PortCountersExtended) uint64 { return x.LinkDownedCounter },
	"PortRcvErrors":                func(x *perf.PortCountersExtended) uint64 { return x.PortRcvErrors },
	"PortRcvRemotePhysicalErrors":  func(x *perf.PortCountersExtended) uint64 { return x.PortRcvRemotePhysicalErrors },
	"PortRcvSwitchRelayErrors":     func(x *perf.PortCountersExtended) uint64 { return x.PortRcvSwitchRelayErrors },
	"PortXmitDiscards":             func(x *perf.PortCountersExtended) uint64 { return x.PortXmitDiscards },
	"PortXmitConstraintErrors":     func(x *perf.PortCountersExtended) uint64 { return x.PortXmitConstraintErrors },
	"PortRcvConstraintErrors":      func(x *perf.PortCountersExtended) uint64 { return x.PortRcvConstraintErrors },
	"LocalLinkIntegrityErrors":     func(x *perf.PortCountersExtended) uint64 { return x.LocalLinkIntegrityErrors },
	"ExcessiveBufferOverrunErrors": func(x *perf.PortCountersExtended) uint64 { return x.ExcessiveBufferOverrunErrors },
	"VL15Dropped":                  func(x *perf.PortCountersExtended) uint64 { return x.VL15Dropped },
	"PortXmitWait":                 func(x *perf.PortCountersExtended) uint64 { return x.PortXmitWait },
	"QP1Dropped":                   func(x *perf.PortCountersExtended) uint64 { return x.QP1Dropped },
}

// hasAdditional reports whether ps's PortCountersExtended answer carries
// the additional counters (its PMA has Cap2AdditionalPortCounters).
func (ps *PortSample) hasAdditional() bool {
	return ps.ExtErr == nil && ps.CapsErr == nil && ps.Caps2&perf.Cap2AdditionalPortCounters != 0
}

// extended reports whether c is read for ps from its 64-bit additional
// PortCountersExtended field, which does not saturate.
func (c *portCounter) extended(ps *PortSample) bool {
	return c.from == fromPC && additional[c.field] != nil && ps.hasAdditional()
}

// value is c's value for ps: the 64-bit additional counter where the PMA
// has it, else the PortCounters (or detail) field.
func (c *portCounter) value(ps *PortSample) uint64 {
	if c.extended(ps) {
		return additional[c.field](&ps.Ext)
	}
	return c.get(ps)
}

// saturated reports whether c, served for ps, sits at the top of its
// width: it counts no more until reset.
func (c *portCounter) saturated(ps *PortSample) bool {
	return c.width > 0 && !c.extended(ps) && c.get(ps) == 1<<c.width-1
}

// Saturated lists the counters of ps that are saturated (by IBA field
// name), among those the sweep read.
func (ps *PortSample) Saturated() []string {
	var out []string
	for i := range portCounters {
		c := &portCounters[i]
		if c.served(ps) && c.saturated(ps) {
			out = append(out, c.field)
		}
	}
	return out
}

// kindDescs are the per-port and per-node series of one kind of node:
// switches (infiniband_switch_*) or CAs (infiniband_hca_*).
type kindDescs struct {
	collector string // the collector label of the exporter's gauges
	counters  []*family
	info      *family
	uplink    *family
	rate      *family
	rawRate   *family
	portRate  *family
	portRaw   *family
	state     *family
	phys      *family
	width     *family
	speed     *family
	waitRatio *family
	saturated *family
	downSince *family
	flaps     *family
}

func makeKind(kind, title string) *kindDescs {
	pre := "infiniband_" + kind + "_"
	k := &kindDescs{collector: kind}
	for _, c := range portCounters {
		k.counters = append(k.counters, newFamily(pre+"port_"+c.name, "Infiniband "+title+" port "+c.field, prometheus.CounterValue, portLabels...).withPlane())
	}
	k.info = newFamily(pre+"info", "Infiniband "+title+" information (value 1)", prometheus.GaugeValue, []string{"guid", kind, "lid"}...)
	k.uplink = newFamily(pre+"uplink_info", "Infiniband "+title+" uplink information: the port at the other end of each linked port (value 1)", prometheus.GaugeValue, []string{"guid", "port", kind, "uplink", "uplink_guid", "uplink_type", "uplink_port", "uplink_lid"}...).withPlane()
	k.rate = newFamily(pre+"rate_bytes_per_second", "Infiniband "+title+" rate: the highest data rate of its active ports, in bytes per second", prometheus.GaugeValue, []string{"guid"}...)
	k.rawRate = newFamily(pre+"raw_rate_bytes_per_second", "Infiniband "+title+" raw rate: the highest raw rate of its active ports, in bytes per second", prometheus.GaugeValue, []string{"guid"}...)
	k.portRate = newFamily(pre+"port_rate_bytes_per_second", "Infiniband "+title+" port data rate (active width times lane data rate), in bytes per second, from the last discovery", prometheus.GaugeValue, portLabels...).withPlane()
	k.portRaw = newFamily(pre+"port_raw_rate_bytes_per_second", "Infiniband "+title+" port raw rate (active width times lane signalling rate up to EDR: SDR 2.5, DDR 5, QDR 10, FDR10 10.3125, FDR 14.0625, EDR 25.78125; HDR 50, NDR 100, XDR 200 Gb/s), in bytes per second, from the last discovery", prometheus.GaugeValue, portLabels...).withPlane()
	k.state = newFamily(pre+"port_state", "Infiniband "+title+" port PortState from the last discovery: 1 Down, 2 Init, 3 Armed, 4 Active", prometheus.GaugeValue, portLabels...).withPlane()
	k.phys = newFamily(pre+"port_physical_state", "Infiniband "+title+" port PortPhysicalState from the last discovery: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest", prometheus.GaugeValue, portLabels...).withPlane()
	k.width = newFamily(pre+"port_link_width_lanes", "Infiniband "+title+" port active link width in lanes (1, 2, 4, 8, 12) from the last discovery", prometheus.GaugeValue, portLabels...).withPlane()
	k.speed = newFamily(pre+"port_link_speed_info", "Infiniband "+title+" port active link speed (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR, as ibnetdiscover -p names it) from the last discovery (value 1)", prometheus.GaugeValue, append(portLabels[:2:2], "speed")...).withPlane()
	k.waitRatio = newFamily(pre+"port_transmit_wait_ratio", "Infiniband "+title+" port fraction of the time since the previous sweep it had data to send and sent none: PortXmitWait growth x tick / seconds, the tick being --xmit-wait-tick symbol times (8 / lane data rate: 4 ns at SDR)", prometheus.GaugeValue, portLabels...).withPlane()
	k.downSince = newFamily(pre+"port_down_since_timestamp_seconds", "Infiniband "+title+" port: Unix time the exporter saw it go down (a trap's re-read of its PortInfo, or a discovery finding Down a port that was up), while it stays down; kept until it comes back or a discovery no longer finds its node", prometheus.GaugeValue, portLabels...).withPlane()
	k.flaps = newFamily(pre+"port_link_flaps_total", "Infiniband "+title+" port link flaps since the exporter started: LinkDownedCounter's growth between two reads, or the times the exporter saw the port go down (traps, discoveries) when more", prometheus.CounterValue, portLabels...).withPlane()
	k.saturated = newFamily(pre+"port_counter_saturated", "Infiniband "+title+" port counter at the top of its width, counting no more until reset (value 1; one series per saturated counter)", prometheus.GaugeValue, append(portLabels[:2:2], "counter")...).withPlane()
	return k
}

var (
	portLabels  = []string{"guid", "port"}
	switchKind  = makeKind("switch", "switch")
	hcaKind     = makeKind("hca", "HCA")
	linkInfo    = newFamily("infiniband_link_info", "Infiniband link: one series per cable, both ends as labels (a switch end first), value 1", prometheus.GaugeValue, []string{"local_guid", "local_name", "local_port", "local_type", "remote_guid", "remote_name", "remote_port", "remote_type"}...).withPlane()
	nodeErrors  = newFamily("infiniband_exporter_node_errors", "Number of queries to the node that failed in the sweep the scrape is served from (timeouts included)", prometheus.GaugeValue, []string{"guid", "name", "type"}...)
	nodeTimeout = newFamily("infiniband_exporter_node_timeouts", "Number of queries to the node that timed out in the sweep the scrape is served from", prometheus.GaugeValue, []string{"guid", "name", "type"}...)
	durationDsc = newFamily("infiniband_exporter_collector_duration_seconds", "Duration of the sweep the scrape is served from", prometheus.GaugeValue, []string{"collector"}...)
	errorsDesc  = newFamily("infiniband_exporter_collect_errors", "Number of queries that failed in the sweep the scrape is served from (timeouts included)", prometheus.GaugeValue, []string{"collector"}...)
	timeoutDesc = newFamily("infiniband_exporter_collect_timeouts", "Number of queries that timed out in the sweep the scrape is served from", prometheus.GaugeValue, []string{"collector"}...)
	ageFamily   = newFamily(ageName, "Seconds since the sweep the scrape is served from ended", prometheus.GaugeValue)
	seqDesc     = newFamily("infiniband_exporter_sweep_sequence", "Number of the sweep the scrape is served from (1 for the first)", prometheus.GaugeValue)
	stampDesc   = newFamily("infiniband_exporter_sweep_timestamp_seconds", "Unix time the sweep the scrape is served from ended", prometheus.GaugeValue)
	resetsDesc  = newFamily("infiniband_exporter_saturated_resets", "Number of ports whose saturated counters --reset-saturated cleared after the sweep the scrape is served from", prometheus.GaugeValue, []string{"collector"}...)
	resetErrs   = newFamily("infiniband_exporter_saturated_reset_errors", "Number of those resets that failed (refused without --allow-set on the kernel backend, timed out, ...)", prometheus.GaugeValue, []string{"collector"}...)
	subDesc     = newFamily("infiniband_exporter_trap_subscribed", "1 when the exporter holds a subscription to the SM's traps 64, 65 and 128 (each starts a rediscovery), 0 when it rediscovers on --discover-interval only: the SA refused it, or its Reports cannot reach this port (ibsim without issm)", prometheus.GaugeValue)
	unannDesc   = newFamily("infiniband_exporter_unannounced_changes_total", "Discoveries on --discover-interval, while subscribed to traps, that found switch ports whose state changed with no trap received since the discovery before: traps that did not arrive", prometheus.CounterValue)
	trapsDesc   = newFamily("infiniband_exporter_traps_received_total", "Traps 64, 65 and 128 the SM forwarded to the exporter, up to the sweep the scrape is served from", prometheus.CounterValue)
	lastExec    = newFamily("infiniband_exporter_last_execution", "Last execution time of exporter (Unix seconds; with --exporter.runonce, as treydock/infiniband_exporter serves it)", prometheus.GaugeValue, []string{"collector"}...)
	topoMissN   = newFamily("infiniband_topology_missing_nodes", "Number of nodes of the reference topology (--topology-reference, else the exporter's first discovery) the last discovery did not find", prometheus.GaugeValue)
	topoExtraN  = newFamily("infiniband_topology_extra_nodes", "Number of nodes the last discovery found that the reference topology does not hold", prometheus.GaugeValue)
	topoMissL   = newFamily("infiniband_topology_missing_links", "Number of links (both ends' GUIDs and ports) of the reference topology the last discovery did not find", prometheus.GaugeValue)
	topoExtraL  = newFamily("infiniband_topology_extra_links", "Number of links the last discovery found that the reference topology does not hold", prometheus.GaugeValue)
	refreshDesc = newFamily("infiniband_exporter_trap_refreshes_total", "Snapshots published after traps, each re-reading just the ports the traps named (their PortInfo, and counters), up to the snapshot the scrape is served from", prometheus.CounterValue)
	discDesc    = newFamily("infiniband_exporter_discovery_timestamp_seconds", "Unix time the topology of the sweep the scrape is served from was discovered (port state, width, speed and the info series come from it)", prometheus.GaugeValue)
)

// Describe sends every metric the Exporter serves.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range families {
		if e.serves(f) {
			ch <- f.desc
		}
	}
}

// Collect serves the last complete sweep: every series of one scrape
// comes from the same Snapshot. Before the first sweep it serves nothing.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	s := e.snap.Load()
	if s == nil {
		return
	}
	e.collect(s, chanEmitter{ch})
}

func kindOf(n *topo.Node) *kindDescs {
	if n.Type == topo.Switch {
		return switchKind
	}
	return hcaKind
}

// base reports whether the base series of k's ports are served
// (Options.NoSwitch, NoSwitchBase, NoHCABase).
func (e *Exporter) base(k *kindDescs) bool {
	if k == switchKind {
		return !e.opts.NoSwitch && !e.opts.NoSwitchBase
	}
	return !e.opts.NoHCABase
}

// label is k's collector label: "switch", or "switch-runonce" with
// Options.RunOnce.
func (e *Exporter) label(k *kindDescs) string {
	if e.opts.RunOnce {
		return k.collector + "-runonce"
	}
	return k.collector
}

func (e *Exporter) collect(s *Snapshot, em emitter) {
	var errs, timeouts [2]int // switch, hca
	for i := range s.Ports {
		ps := &s.Ports[i]
		k := kindOf(ps.Port.Node)
		if k == switchKind && e.opts.NoSwitch {
			continue
		}
		base := e.base(k)
		guid, port := hexGUID(ps.Port.Node.GUID), strconv.Itoa(ps.Port.Num)
		for j := range portCounters {
			c := &portCounters[j]
			if !c.served(ps) || !base && (c.from == fromExt || c.from == fromPC) {
				continue
			}
			e.emitPort(em, k.counters[j], ps.Port, float64(c.value(ps)), guid, port)
			if c.saturated(ps) {
				e.emitPort(em, k.saturated, ps.Port, 1, guid, port, c.field)
			}
		}
		e.emitPort(em, k.flaps, ps.Port, float64(s.Flaps[keyOf(ps.Port)]), guid, port)
		if !base {
			continue
		}
		if ps.XmitWaitOK {
			e.emitPort(em, k.waitRatio, ps.Port, ps.XmitWaitRatio, guid, port)
		}
		r := ps.Port.Remote
		rlid := 0
		if ep := r.Node.EndPort(r.Num); ep != nil {
			rlid = int(ep.LID)
		}
		e.emitPort(em, k.uplink, ps.Port, 1,
			guid, port, ps.Port.Node.Desc, r.Node.Desc, hexGUID(r.Node.GUID), uplinkType(r.Node.Type),
			strconv.Itoa(r.Num), strconv.Itoa(rlid))
	}
	for _, ns := range s.Nodes {
		kind := 0
		if ns.Node.Type != topo.Switch {
			kind = 1
		}
		errs[kind] += ns.Errors
		timeouts[kind] += ns.Timeouts
		guid, typ := hexGUID(ns.Node.GUID), uplinkType(ns.Node.Type)
		em.emit(nodeErrors, float64(ns.Errors), guid, ns.Node.Desc, typ)
		em.emit(nodeTimeout, float64(ns.Timeouts), guid, ns.Node.Desc, typ)
	}
	if !e.opts.NoSwitch {
		for _, n := range s.Switches {
			e.collectNode(em, s, switchKind, n, e.base(switchKind))
		}
	}
	for _, n := range s.HCAs {
		e.collectNode(em, s, hcaKind, n, e.base(hcaKind))
	}
	e.collectHistory(em, s)
	e.collectLinks(em, s)
	// The queries discovery could not answer are no node's: the switch
	// collector's.
	other := s.Errors - errs[0] - errs[1]
	otherT := s.Timeouts - timeouts[0] - timeouts[1]
	em.emit(durationDsc, s.Duration.Seconds(), e.label(switchKind))
	em.emit(errorsDesc, float64(errs[0]+other), e.label(switchKind))
	em.emit(timeoutDesc, float64(timeouts[0]+otherT), e.label(switchKind))
	if e.opts.HCA {
		em.emit(durationDsc, s.Duration.Seconds(), e.label(hcaKind))
		em.emit(errorsDesc, float64(errs[1]), e.label(hcaKind))
		em.emit(timeoutDesc, float64(timeouts[1]), e.label(hcaKind))
	}
	if e.opts.RunOnce {
		em.emit(lastExec, float64(s.Time.Unix()), e.label(switchKind))
		if e.opts.HCA {
			em.emit(lastExec, float64(s.Time.Unix()), e.label(hcaKind))
		}
	}
	if e.opts.ResetSaturated {
		var n, bad [2]int
		for _, r := range s.Resets {
			k := 0
			if r.Port.Node.Type != topo.Switch {
				k = 1
			}
			n[k]++
			if r.Err != nil {
				bad[k]++
			}
		}
		for k, kd := range []*kindDescs{switchKind, hcaKind} {
			if k == 1 && !e.opts.HCA {
				break
			}
			em.emit(resetsDesc, float64(n[k]), e.label(kd))
			em.emit(resetErrs, float64(bad[k]), e.label(kd))
		}
	}
	em.emit(ageFamily, e.now().Sub(s.Time).Seconds())
	em.emit(seqDesc, float64(s.Seq))
	em.emit(stampDesc, float64(s.Time.UnixNano())/1e9)
	if e.opts.Traps {
		sub := 0.0
		if s.Subscribed {
			sub = 1
		}
		em.emit(subDesc, sub)
		em.emit(trapsDesc, float64(s.Traps))
		em.emit(unannDesc, float64(s.Unannounced))
	}
	em.emit(discDesc, float64(s.DiscoveryTime.UnixNano())/1e9)
}

// collectNode serves a node's info and rates, and the state, width, speed
// and rates of each of its ports (linked or not) as discovery read them
// (the state as a trap's re-read found it, Snapshot.PortState); without
// base, not the info and rates (treydock's base metrics).
func (e *Exporter) collectNode(em emitter, s *Snapshot, k *kindDescs, n *topo.Node, base bool) {
	guid := hexGUID(n.GUID)
	lid := 0
	if ep := n.EndPort(1); n.Type == topo.Switch && ep != nil {
		lid = int(ep.LID)
	} else {
		for _, p := range n.Ports[1:] {
			if p != nil && p.LID != 0 {
				lid = int(p.LID)
				break
			}
		}
	}
	if base {
		em.emit(k.info, 1, guid, n.Desc, strconv.Itoa(lid))
	}
	best, bestRaw := 0.0, 0.0
	for _, p := range n.Ports[1:] {
		if p == nil {
			continue
		}
		port := strconv.Itoa(p.Num)
		state, phys := s.PortState(p)
		if state != 0 {
			e.emitPort(em, k.state, p, float64(state), guid, port)
		}
		if phys != 0 {
			e.emitPort(em, k.phys, p, float64(phys), guid, port)
		}
		if at, ok := s.DownSince[keyOf(p)]; ok {
			e.emitPort(em, k.downSince, p, float64(at.UnixNano())/1e9, guid, port)
		}
		if state < smp.PortStateInit {
			continue // a down port's active width and speed mean nothing
		}
		if l := smp.WidthLanes(p.WidthActive); l != 0 {
			e.emitPort(em, k.width, p, float64(l), guid, port)
		}
		if sp := speedText(p); sp != "" {
			e.emitPort(em, k.speed, p, 1, guid, port, sp)
		}
		if r := rateBytes(p); r != 0 && base {
			e.emitPort(em, k.portRate, p, r, guid, port)
			best = max(best, r)
		}
		if r := rawRateBytes(p); r != 0 && base {
			e.emitPort(em, k.portRaw, p, r, guid, port)
			bestRaw = max(bestRaw, r)
		}
	}
	if best != 0 {
		em.emit(k.rate, best, guid)
	}
	if bestRaw != 0 {
		em.emit(k.rawRate, bestRaw, guid)
	}
}

// collectHistory serves the flaps of ports not swept (those of s.Ports
// are served with their counters), the topology's changes since the
// reference and the trap refreshes.
func (e *Exporter) collectHistory(em emitter, s *Snapshot) {
	if len(s.Flaps) > 0 {
		swept := make(map[PortKey]bool, len(s.Ports))
		for i := range s.Ports {
			swept[keyOf(s.Ports[i].Port)] = true
		}
		served := map[uint64]*topo.Node{}
		for _, n := range s.Switches {
			if !e.opts.NoSwitch {
				served[n.GUID] = n
			}
		}
		for _, n := range s.HCAs {
			served[n.GUID] = n
		}
		for k, v := range s.Flaps {
			n := served[k.GUID]
			if n == nil || swept[k] {
				continue
			}
			var p *topo.Port
			if k.Port < len(n.Ports) {
				p = n.Ports[k.Port]
			}
			if p == nil && e.planes {
				continue // no plane to label it with
			}
			e.emitPort(em, kindOf(n).flaps, p, float64(v), hexGUID(k.GUID), strconv.Itoa(k.Port))
		}
	}
	em.emit(topoMissN, float64(s.Topology.MissingNodes))
	em.emit(topoExtraN, float64(s.Topology.ExtraNodes))
	em.emit(topoMissL, float64(s.Topology.MissingLinks))
	em.emit(topoExtraL, float64(s.Topology.ExtraLinks))
	if e.opts.Traps {
		em.emit(refreshDesc, float64(s.Refreshes))
	}
}

// collectLinks serves one infiniband_link_info series per cable of the
// swept nodes: the switch end local (of two switches, the lower GUID).
func (e *Exporter) collectLinks(em emitter, s *Snapshot) {
	for _, nodes := range [][]*topo.Node{s.Switches, s.HCAs} {
		for _, n := range nodes {
			for _, p := range n.Ports[1:] {
				if p == nil || p.Remote == nil {
					continue
				}
				r := p.Remote
				if n.Type != topo.Switch && r.Node.Type == topo.Switch {
					continue // served from the switch end
				}
				if n.Type == r.Node.Type && (n.GUID > r.Node.GUID || (n.GUID == r.Node.GUID && p.Num > r.Num)) {
					continue // served from the other end
				}
				e.emitPort(em, linkInfo, p, 1,
					hexGUID(n.GUID), n.Desc, strconv.Itoa(p.Num), uplinkType(n.Type),
					hexGUID(r.Node.GUID), r.Node.Desc, strconv.Itoa(r.Num), uplinkType(r.Node.Type))
			}
		}
	}
}

// hexGUID writes a GUID as ibnetdiscover does, and so as the other
// exporter's guid labels read.
func hexGUID(g uint64) string { return fmt.Sprintf("0x%016x", g) }

// uplinkType is ibnetdiscover's node type word: CA, SW or RT.
func uplinkType(t topo.NodeType) string {
	switch t {
	case topo.Switch:
		return "SW"
	case topo.Router:
		return "RT"
	}
	return "CA"
}
