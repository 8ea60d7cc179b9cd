package fabric

import (
	"context"
	"fmt"
	"slices"
)

// PortPair is a local port's SMI/GSI pair, libibumad's struct
// umad_ca_pair: the CA whose port carries the SMPs (management classes
// 0x01 and 0x81) and the one whose port carries every other class. A
// planarized HCA shows up as two or more CAs whose ports share one port
// GUID: the port whose CapabilityMask has IsSMDisabled (CapIsSMDisabled)
// is the GSI side, the other the SMI side. A normal port is both its own
// SMI and GSI (SMIName == GSIName). A name is "" where no CA plays that
// part (a lone IsSMDisabled port has no SMI side). A preferred port is 0
// where none was chosen (Pairs leaves them 0, as umad_get_smi_gsi_pairs
// does).
type PortPair struct {
	SMIName string `json:"smi_name"`
	SMIPort int    `json:"smi_preferred_port"`
	GSIName string `json:"gsi_name"`
	GSIPort int    `json:"gsi_preferred_port"`
}

// Planarized reports whether SMPs and GMPs go through two CAs.
func (p PortPair) Planarized() bool {
	return p.SMIName != "" && p.GSIName != "" && p.SMIName != p.GSIName
}

// CapIsSMDisabled is PortInfo CapabilityMask bit 10, IsSMDisabled: the
// port has no SMA; in a planarized HCA it marks the GSI side.
const CapIsSMDisabled = 0x400

// SMIClass reports whether a management class travels on the SMI side:
// LID-routed and directed-route SMPs (libibmad's get_port_for_class).
func SMIClass(class uint8) bool { return class == 0x01 || class == 0x81 }

// Pairer is implemented by a Fabric that knows its ports' SMI/GSI pairs
// (the kernel's, from sysfs as libibumad finds them). Use PairsOf and
// PairOf, which answer for every Fabric.
type Pairer interface {
	// Pairs lists the pairs as umad_get_smi_gsi_pairs: one per port GUID,
	// in the order of the first CA (by name) that has it; preferred ports
	// 0.
	Pairs(ctx context.Context) ([]PortPair, error)
	// Pair finds a pair as umad_get_smi_gsi_pair_by_ca_name(ca, port,
	// enforceSMI): ca names its SMI or GSI side ("" for any), port one
	// of its ports (0 for any); the preferred ports are filled in. No
	// match is an error wrapping ErrNoDevice.
	Pair(ctx context.Context, ca string, port int, enforceSMI bool) (PortPair, error)
}

// PairsOf returns f's pairs: f's own when f is a Pairer, else one pair
// per CA of f.Ports (no planes: every CA its own SMI and GSI), by name,
// preferred ports 0.
func PairsOf(ctx context.Context, f Fabric) ([]PortPair, error) {
	if p, ok := f.(Pairer); ok {
		return p.Pairs(ctx)
	}
	ports, err := f.Ports(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, a := range ports {
		if !slices.Contains(names, a.CAName) && !a.RoCE() {
			names = append(names, a.CAName)
		}
	}
	slices.Sort(names)
	pairs := make([]PortPair, 0, len(names))
	for _, n := range names {
		pairs = append(pairs, PortPair{SMIName: n, GSIName: n})
	}
	return pairs, nil
}

// PairOf returns the pair of (ca, port): f's own answer when f is a
// Pairer; else the first port of f.Ports (in default-port order) of CA
// ca (any, when "") numbered port (any, when 0) that is above Down (in
// any state when both ca and port are given), as its own SMI and GSI.
// No match wraps ErrNoDevice.
func PairOf(ctx context.Context, f Fabric, ca string, port int, enforceSMI bool) (PortPair, error) {
	if p, ok := f.(Pairer); ok {
		return p.Pair(ctx, ca, port, enforceSMI)
	}
	ports, err := f.Ports(ctx)
	if err != nil {
		return PortPair{}, err
	}
	for _, a := range ports {
		if a.RoCE() || ca != "" && a.CAName != ca || port != 0 && a.PortNum != port || enforceSMI && a.CapMask&CapIsSMDisabled != 0 {
			continue
		}
		if a.State > 1 || ca != "" && port != 0 {
			return PortPair{SMIName: a.CAName, SMIPort: a.PortNum, GSIName: a.CAName, GSIPort: a.PortNum}, nil
		}
	}
	return PortPair{}, fmt.Errorf("no SMI/GSI pair for CA %q port %d: %w", ca, port, ErrNoDevice)
}
