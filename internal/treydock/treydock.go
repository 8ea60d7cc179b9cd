// Package treydock holds the series of treydock/infiniband_exporter, the
// exporter ibscript's serves in the same names: each metric name with its
// label names, as that project's collectors define them and its Grafana
// dashboards and alert rules use them. The exporter's tests and the
// command's compare what ibscript serves with them. It exists for tests.
package treydock

import (
	"maps"
	"slices"
	"strings"
)

// SwitchBase and SwitchDetails are the series of its switch collector
// (collectors/switch.go, release 0.10.0): the base metrics (perfquery -x,
// ibnetdiscover) and --collector.switch.rcv-err-details' (perfquery -E);
// Collector its collector gauges (collectors/collectors.go). 0.10.0
// replaced infiniband_switch_rate_bytes_per_second and
// _raw_rate_bytes_per_second ({guid}) by the port_ ones ({guid, port}).
var (
	SwitchBase = map[string][]string{
		"infiniband_switch_port_transmit_data_bytes_total":             {"guid", "port"},
		"infiniband_switch_port_receive_data_bytes_total":              {"guid", "port"},
		"infiniband_switch_port_transmit_packets_total":                {"guid", "port"},
		"infiniband_switch_port_receive_packets_total":                 {"guid", "port"},
		"infiniband_switch_port_unicast_transmit_packets_total":        {"guid", "port"},
		"infiniband_switch_port_unicast_receive_packets_total":         {"guid", "port"},
		"infiniband_switch_port_multicast_transmit_packets_total":      {"guid", "port"},
		"infiniband_switch_port_multicast_receive_packets_total":       {"guid", "port"},
		"infiniband_switch_port_symbol_error_total":                    {"guid", "port"},
		"infiniband_switch_port_link_error_recovery_total":             {"guid", "port"},
		"infiniband_switch_port_link_downed_total":                     {"guid", "port"},
		"infiniband_switch_port_receive_errors_total":                  {"guid", "port"},
		"infiniband_switch_port_receive_remote_physical_errors_total":  {"guid", "port"},
		"infiniband_switch_port_receive_switch_relay_errors_total":     {"guid", "port"},
		"infiniband_switch_port_transmit_discards_total":               {"guid", "port"},
		"infiniband_switch_port_transmit_constraint_errors_total":      {"guid", "port"},
		"infiniband_switch_port_receive_constraint_errors_total":       {"guid", "port"},
		"infiniband_switch_port_local_link_integrity_errors_total":     {"guid", "port"},
		"infiniband_switch_port_excessive_buffer_overrun_errors_total": {"guid", "port"},
		"infiniband_switch_port_vl15_dropped_total":                    {"guid", "port"},
		"infiniband_switch_port_transmit_wait_total":                   {"guid", "port"},
		"infiniband_switch_port_qp1_dropped_total":                     {"guid", "port"},
		"infiniband_switch_port_rate_bytes_per_second":                 {"guid", "port"},
		"infiniband_switch_port_raw_rate_bytes_per_second":             {"guid", "port"},
		"infiniband_switch_info":                                       {"guid", "switch", "lid"},
		"infiniband_switch_uplink_info":                                {"guid", "port", "switch", "uplink", "uplink_guid", "uplink_type", "uplink_port", "uplink_lid"},
	}
	SwitchDetails = map[string][]string{
		"infiniband_switch_port_local_physical_errors_total":   {"guid", "port"},
		"infiniband_switch_port_malformed_packet_errors_total": {"guid", "port"},
		"infiniband_switch_port_buffer_overrun_errors_total":   {"guid", "port"},
		"infiniband_switch_port_dli_mapping_errors_total":      {"guid", "port"},
		"infiniband_switch_port_vl_mapping_errors_total":       {"guid", "port"},
		"infiniband_switch_port_looping_errors_total":          {"guid", "port"},
	}
	Collector = map[string][]string{
		"infiniband_exporter_collector_duration_seconds": {"collector"},
		"infiniband_exporter_collect_errors":             {"collector"},
		"infiniband_exporter_collect_timeouts":           {"collector"},
	}
)

// hcaRates are the switch collector's port rates as the HCA collector
// serves them (collectors/hca.go): one per CA, by guid.
var hcaRates = map[string]string{
	"infiniband_switch_port_rate_bytes_per_second":     "infiniband_hca_rate_bytes_per_second",
	"infiniband_switch_port_raw_rate_bytes_per_second": "infiniband_hca_raw_rate_bytes_per_second",
}

// AsHCA is a switch collector's names as its HCA collector serves them
// (collectors/hca.go): infiniband_hca_*, an hca label for switch, and the
// rates by CA (hcaRates).
func AsHCA(m map[string][]string) map[string][]string {
	out := map[string][]string{}
	for name, l := range m {
		if hn, ok := hcaRates[name]; ok {
			out[hn] = []string{"guid"}
			continue
		}
		hl := slices.Clone(l)
		for i := range hl {
			if hl[i] == "switch" {
				hl[i] = "hca"
			}
		}
		out[strings.Replace(name, "infiniband_switch_", "infiniband_hca_", 1)] = hl
	}
	return out
}

// All is SwitchBase, SwitchDetails and Collector in one map.
func All() map[string][]string {
	out := maps.Clone(SwitchBase)
	maps.Copy(out, SwitchDetails)
	maps.Copy(out, Collector)
	return out
}
