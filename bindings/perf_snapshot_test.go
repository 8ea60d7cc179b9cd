package bindings

import (
	"strings"
	"testing"
)

// TestPerfSnapshot: perf.snapshot sweeps the default fabric as the
// exporter does and returns its families by name (one series per linked
// switch port, labels by name); a second call is the state's exporter's
// next sweep; {hca = true} is another exporter, with the CA ports; bad
// options are named.
func TestPerfSnapshot(t *testing.T) {
	L, _, out := newTestState(t)
	err := L.DoString(`
		local s = perf.snapshot()
		local f = s.infiniband_switch_port_transmit_data_bytes_total
		assert(f.type == "counter" and f.labels[1] == "guid" and f.labels[2] == "port", f.type)
		assert(s.infiniband_switch_port_state.type == "gauge")
		local ports = {}
		for _, sr in ipairs(f.series) do
			assert(sr.labels.guid:match("^0x%x+$") and tonumber(sr.labels.port) and sr.value >= 0)
			ports[sr.labels.guid .. ":" .. sr.labels.port] = true
		end
		local n = 0
		for _ in pairs(ports) do n = n + 1 end
		print(#f.series, n, s.infiniband_exporter_sweep_sequence.series[1].value, s.infiniband_hca_port_transmit_data_bytes_total)
		print(#s.infiniband_switch_port_link_flaps_total.series)
		local s2 = perf.snapshot()
		print(s2.infiniband_exporter_sweep_sequence.series[1].value)
		local h = perf.snapshot{hca = true}
		print(h.infiniband_exporter_sweep_sequence.series[1].value, #h.infiniband_hca_port_transmit_data_bytes_total.series)
	`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "32\t32\t1\tnil\n32\n2\n1\t16\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	for code, msg := range map[string]string{
		`perf.snapshot{hcaa = true}`: `perf.snapshot: unknown option "hcaa" (did you mean hca? known: details, hca, planes)`,
		`perf.snapshot{hca = 1}`:     `perf.snapshot: option hca: boolean expected, got number`,
	} {
		if err := L.DoString(code); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", code, err, msg)
		}
	}
}
