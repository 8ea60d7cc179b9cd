package diag

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"sort"
	"strconv"
	"strings"
)

// thresholdNames maps the counter names of ibqueryerrors' threshold file
// (libibmad's field names) to the snake_case keys of ibscript's decoded
// PortCounters. ibqueryerrors reports a counter when its value is above
// the threshold; the default threshold is 0.
var thresholdNames = map[string]string{
	"SymbolErrorCounter":           "symbol_error_counter",
	"LinkErrorRecoveryCounter":     "link_error_recovery_counter",
	"LinkDownedCounter":            "link_downed_counter",
	"PortRcvErrors":                "port_rcv_errors",
	"PortRcvRemotePhysicalErrors":  "port_rcv_remote_physical_errors",
	"PortRcvSwitchRelayErrors":     "port_rcv_switch_relay_errors",
	"PortXmitDiscards":             "port_xmit_discards",
	"PortXmitConstraintErrors":     "port_xmit_constraint_errors",
	"PortRcvConstraintErrors":      "port_rcv_constraint_errors",
	"LocalLinkIntegrityErrors":     "local_link_integrity_errors",
	"ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors",
	"VL15Dropped":                  "vl15_dropped",
	"PortXmitWait":                 "port_xmit_wait",
}

// Threshold is one "Name=value" line of a threshold file.
type Threshold struct {
	Name  string // the counter's name in the file ("SymbolErrorCounter")
	Value uint64
}

// Thresholds are what a threshold file sets, in its order (ibqueryerrors'
// summary lists them so, a name set twice twice).
type Thresholds []Threshold

// Of is the threshold of the counter named name (IBA name): the last line
// setting it, 0 when none does.
func (ts Thresholds) Of(name string) uint64 {
	var v uint64
	for _, t := range ts {
		if t.Name == name {
			v = t.Value
		}
	}
	return v
}

// Text is ibqueryerrors' summary line of the thresholds:
// "Thresholds: [SymbolErrorCounter = 10][PortXmitWait = 1000]".
func (ts Thresholds) Text() string {
	var b strings.Builder
	b.WriteString("Thresholds: ")
	for _, t := range ts {
		fmt.Fprintf(&b, "[%s = %d]", t.Name, t.Value)
	}
	return b.String()
}

// ParseThresholds reads an ibqueryerrors threshold file
// (/etc/infiniband-diags/error_thresholds): lines "Name=value", '#'
// starting a comment line, blank lines ignored, values in C's strtoul
// base 0 (decimal, 0x hex, 0 octal). It returns thresholds by snake_case
// counter key. Unlike ibqueryerrors, which ignores them, unknown names and
// bad values are errors naming the line.
func ParseThresholds(r io.Reader, name string) (map[string]uint64, error) {
	ts, err := ReadThresholds(r, name)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, t := range ts {
		out[thresholdNames[t.Name]] = t.Value
	}
	return out, nil
}

// ReadThresholds is ParseThresholds keeping the file's lines in order.
func ReadThresholds(r io.Reader, name string) (Thresholds, error) {
	var out Thresholds
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return nil, fmt.Errorf("%s:%d: want Name=value (no '=' on the line, which is not shown)", name, line)
		}
		if _, known := thresholdNames[k]; !known {
			names := make([]string, 0, len(thresholdNames))
			for n := range thresholdNames {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("%s:%d: unknown counter %q (known: %s)", name, line, k, strings.Join(names, ", "))
		}
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s=%q: not a number", name, line, k, v)
		}
		out = append(out, Threshold{Name: k, Value: n})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d bytes", name, line+1, bufio.MaxScanTokenSize)
		}
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return out, nil
}

// ThresholdNames returns the counter names of ibqueryerrors' threshold
// file (as ParseThresholds accepts them) with the keys of Thresholds they
// set.
func ThresholdNames() map[string]string { return maps.Clone(thresholdNames) }
