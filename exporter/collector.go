package exporter

import (
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/topo"
)

// ageName is the sweep age gauge, the one series renewed at each scrape.
const ageName = "infiniband_exporter_sweep_age_seconds"

// collectorName is the collector label of the exporter's own gauges, as
// treydock/infiniband_exporter names its switch collector.
const collectorName = "switch"

// portCounter is one per-port counter series: its name after
// "infiniband_switch_port_", the counter it reads, and whether it comes
// from PortCountersExtended (else PortCounters).
type portCounter struct {
	name string
	help string
	ext  bool
	get  func(*PortSample) uint64
	// needs is the PMA capability the field needs (0: none); without
	// it, or with the capabilities unknown, the series is left out.
	needs uint16
}

// portCounters are the per-port series, named as
// treydock/infiniband_exporter names them (data in bytes: the wire counts
// 4-byte words).
var portCounters = []portCounter{
	{"transmit_data_bytes_total", "PortXmitData (PortCountersExtended) in bytes", true, func(s *PortSample) uint64 { return s.Ext.PortXmitData * 4 }, 0},
	{"receive_data_bytes_total", "PortRcvData (PortCountersExtended) in bytes", true, func(s *PortSample) uint64 { return s.Ext.PortRcvData * 4 }, 0},
	{"transmit_packets_total", "PortXmitPkts (PortCountersExtended)", true, func(s *PortSample) uint64 { return s.Ext.PortXmitPkts }, 0},
	{"receive_packets_total", "PortRcvPkts (PortCountersExtended)", true, func(s *PortSample) uint64 { return s.Ext.PortRcvPkts }, 0},
	{"unicast_transmit_packets_total", "PortUnicastXmitPkts (PortCountersExtended)", true, func(s *PortSample) uint64 { return s.Ext.PortUnicastXmitPkts }, perf.CapExtendedWidth},
	{"unicast_receive_packets_total", "PortUnicastRcvPkts (PortCountersExtended)", true, func(s *PortSample) uint64 { return s.Ext.PortUnicastRcvPkts }, perf.CapExtendedWidth},
	{"multicast_transmit_packets_total", "PortMulticastXmitPkts (PortCountersExtended)", true, func(s *PortSample) uint64 { return s.Ext.PortMulticastXmitPkts }, perf.CapExtendedWidth},
	{"multicast_receive_packets_total", "PortMulticastRcvPkts (PortCountersExtended)", true, func(s *PortSample) uint64 { return s.Ext.PortMulticastRcvPkts }, perf.CapExtendedWidth},
	{"symbol_error_total", "SymbolErrorCounter (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.SymbolErrorCounter) }, 0},
	{"link_error_recovery_total", "LinkErrorRecoveryCounter (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.LinkErrorRecoveryCounter) }, 0},
	{"link_downed_total", "LinkDownedCounter (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.LinkDownedCounter) }, 0},
	{"receive_errors_total", "PortRcvErrors (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.PortRcvErrors) }, 0},
	{"receive_remote_physical_errors_total", "PortRcvRemotePhysicalErrors (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.PortRcvRemotePhysicalErrors) }, 0},
	{"receive_switch_relay_errors_total", "PortRcvSwitchRelayErrors (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.PortRcvSwitchRelayErrors) }, 0},
	{"transmit_discards_total", "PortXmitDiscards (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.PortXmitDiscards) }, 0},
	{"transmit_constraint_errors_total", "PortXmitConstraintErrors (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.PortXmitConstraintErrors) }, 0},
	{"receive_constraint_errors_total", "PortRcvConstraintErrors (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.PortRcvConstraintErrors) }, 0},
	{"local_link_integrity_errors_total", "LocalLinkIntegrityErrors (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.LocalLinkIntegrityErrors) }, 0},
	{"excessive_buffer_overrun_errors_total", "ExcessiveBufferOverrunErrors (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.ExcessiveBufferOverrunErrors) }, 0},
	{"vl15_dropped_total", "VL15Dropped (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.VL15Dropped) }, 0},
	{"qp1_dropped_total", "QP1Dropped (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.QP1Dropped) }, 0},
	{"transmit_wait_total", "PortXmitWait (PortCounters)", false, func(s *PortSample) uint64 { return uint64(s.PC.PortXmitWait) }, perf.CapPortXmitWait},
}

var (
	portLabels  = []string{"guid", "port"}
	portDescs   = makePortDescs()
	switchInfo  = prometheus.NewDesc("infiniband_switch_info", "Infiniband switch information (value 1)", []string{"guid", "switch", "lid"}, nil)
	uplinkInfo  = prometheus.NewDesc("infiniband_switch_uplink_info", "Infiniband switch uplink information: the port at the other end of each linked switch port (value 1)", []string{"guid", "port", "switch", "uplink", "uplink_guid", "uplink_type", "uplink_port", "uplink_lid"}, nil)
	durationDsc = prometheus.NewDesc("infiniband_exporter_collector_duration_seconds", "Duration of the sweep the scrape is served from", []string{"collector"}, nil)
	errorsDesc  = prometheus.NewDesc("infiniband_exporter_collect_errors", "Number of queries that failed in the sweep the scrape is served from (timeouts included)", []string{"collector"}, nil)
	timeoutDesc = prometheus.NewDesc("infiniband_exporter_collect_timeouts", "Number of queries that timed out in the sweep the scrape is served from", []string{"collector"}, nil)
	ageDesc     = prometheus.NewDesc(ageName, "Seconds since the sweep the scrape is served from ended", nil, nil)
	seqDesc     = prometheus.NewDesc("infiniband_exporter_sweep_sequence", "Number of the sweep the scrape is served from (1 for the first)", nil, nil)
	stampDesc   = prometheus.NewDesc("infiniband_exporter_sweep_timestamp_seconds", "Unix time the sweep the scrape is served from ended", nil, nil)
)

func makePortDescs() []*prometheus.Desc {
	out := make([]*prometheus.Desc, len(portCounters))
	for i, c := range portCounters {
		out[i] = prometheus.NewDesc("infiniband_switch_port_"+c.name, "Infiniband switch port "+c.help, portLabels, nil)
	}
	return out
}

// Describe sends every metric the Exporter serves.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range portDescs {
		ch <- d
	}
	for _, d := range []*prometheus.Desc{switchInfo, uplinkInfo, durationDsc, errorsDesc, timeoutDesc, ageDesc, seqDesc, stampDesc} {
		ch <- d
	}
}

// Collect serves the last complete sweep: every series of one scrape
// comes from the same Snapshot. Before the first sweep it serves nothing.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	s := e.snap.Load()
	if s == nil {
		return
	}
	e.collect(s, ch)
}

func (e *Exporter) collect(s *Snapshot, ch chan<- prometheus.Metric) {
	for i := range s.Ports {
		ps := &s.Ports[i]
		guid, port := hexGUID(ps.Port.Node.GUID), strconv.Itoa(ps.Port.Num)
		for j, c := range portCounters {
			if (c.ext && ps.ExtErr != nil) || (!c.ext && ps.PCErr != nil) ||
				(c.needs != 0 && (ps.CapsErr != nil || ps.Caps&c.needs == 0)) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(portDescs[j], prometheus.CounterValue, float64(c.get(ps)), guid, port)
		}
		r := ps.Port.Remote
		rlid := 0
		if ep := r.Node.EndPort(r.Num); ep != nil {
			rlid = int(ep.LID)
		}
		ch <- prometheus.MustNewConstMetric(uplinkInfo, prometheus.GaugeValue, 1,
			guid, port, ps.Port.Node.Desc, r.Node.Desc, hexGUID(r.Node.GUID), uplinkType(r.Node.Type),
			strconv.Itoa(r.Num), strconv.Itoa(rlid))
	}
	for _, n := range s.Switches {
		lid := 0
		if len(n.Ports) > 0 && n.Ports[0] != nil {
			lid = int(n.Ports[0].LID)
		}
		ch <- prometheus.MustNewConstMetric(switchInfo, prometheus.GaugeValue, 1, hexGUID(n.GUID), n.Desc, strconv.Itoa(lid))
	}
	ch <- prometheus.MustNewConstMetric(durationDsc, prometheus.GaugeValue, s.Duration.Seconds(), collectorName)
	ch <- prometheus.MustNewConstMetric(errorsDesc, prometheus.GaugeValue, float64(s.Errors), collectorName)
	ch <- prometheus.MustNewConstMetric(timeoutDesc, prometheus.GaugeValue, float64(s.Timeouts), collectorName)
	ch <- prometheus.MustNewConstMetric(ageDesc, prometheus.GaugeValue, e.now().Sub(s.Time).Seconds())
	ch <- prometheus.MustNewConstMetric(seqDesc, prometheus.GaugeValue, float64(s.Seq))
	ch <- prometheus.MustNewConstMetric(stampDesc, prometheus.GaugeValue, float64(s.Time.UnixNano())/1e9)
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
