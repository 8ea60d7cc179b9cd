package umad

import (
	"fmt"
	"io/fs"
	"syscall"
)

// MaxDevices is UMAD_MAX_DEVICES: how many names umad_get_cas_names
// gives umad_get_smi_gsi_pairs (128 since rdma-core b44eef016, #1672; 32
// before, in Debian's 44).
const MaxDevices = 128

// CAPair is struct umad_ca_pair: the device that carries a port's SMPs
// (SMI) and the one that carries its other MADs (GSI). A planarized HCA
// shows up as two or more devices whose ports share one port GUID: the
// one whose CapabilityMask has IsSMDisabled is the GSI side, the other the
// SMI side. A normal port is both its own SMI and GSI. A name is "" where
// no device plays that part (a lone IsSMDisabled port has no SMI).
type CAPair struct {
	SMIName          string
	SMIPreferredPort int
	GSIName          string
	GSIPreferredPort int
}

// Planarized reports whether the SMI and GSI are two devices.
func (p CAPair) Planarized() bool {
	return p.SMIName != "" && p.GSIName != "" && p.SMIName != p.GSIName
}

func isSMIDisabled(p *PortInfo) bool { return p.CapMask&capIsSMDisabled != 0 }

// pairPort says whether a port takes part in pairing: it exists, has a
// port GUID (rdma-core 01650abb7 skips zero GUIDs, #1598) and is
// InfiniBand (#1794 skips Ethernet ports in both passes, so a RoCE port
// is neither paired nor counted; "IB", the link layer of a port without
// the file, counts as InfiniBand, as everywhere in libibumad).
func pairPort(p *PortInfo) bool { return p != nil && p.PortGUID != 0 && isIB(p) }

// guidCounts is count_ports_by_guid: how many ports of the CAs carry each
// port GUID, in a table of at most MaxUMADPorts GUIDs (a GUID beyond it
// is not counted). Counts are uint8, as in C.
func guidCounts(cas []*CA) map[uint64]uint8 {
	counts := map[uint64]uint8{}
	for _, ca := range cas {
		for _, p := range ca.Ports[:ca.NumPorts+1] {
			if !pairPort(p) {
				continue
			}
			if _, ok := counts[p.PortGUID]; ok || len(counts) < MaxUMADPorts {
				counts[p.PortGUID]++
			}
		}
	}
	return counts
}

// ErrPairGUIDs is wrapped by SMIGSIPairs when a device's port GUID was
// not counted because more than MaxUMADPorts distinct port GUIDs came
// before it (umad_get_smi_gsi_pairs returns -1 then).
var ErrPairGUIDs = fmt.Errorf("more than %d distinct port GUIDs: %w", MaxUMADPorts, syscall.ENOSPC)

// SMIGSIPairs is umad_get_smi_gsi_pairs(cas, max): the devices of
// umad_get_cas_names (alphabetical, node types 1..3, at most MaxDevices)
// grouped by the GUID of their first port that has a GUID and is
// InfiniBand (the C loop stops at the first such port of each device),
// at most max pairs (and MaxUMADPorts), in the order of their first
// device. A GUID shared by several ports makes each device the GSI side
// when that port has IsSMDisabled, else the SMI side; a GUID of one port
// makes the device both, or only the GSI side when it has IsSMDisabled.
// A device sysfs cannot read is left out. The preferred ports are 0: the
// C function never sets them (its man page says they are the first
// active ports; umad_get_smi_gsi_pair_by_ca_name sets them). The error
// wraps ErrPairGUIDs where C returns -1.
func SMIGSIPairs(fsys fs.FS, max int) ([]CAPair, error) {
	names, err := CANames(fsys)
	if err != nil {
		return nil, err
	}
	var cas []*CA
	for _, n := range names {
		if ca, err := GetCAWithoutGIDTables(fsys, n); err == nil {
			cas = append(cas, ca)
		}
	}
	counts := guidCounts(cas)
	var pairs []CAPair
	byGUID := map[uint64]int{} // get_ca_pair_from_arr_by_guid's mapping
	for _, ca := range cas {
		for _, p := range ca.Ports[:ca.NumPorts+1] {
			if !pairPort(p) {
				continue
			}
			i, ok := byGUID[p.PortGUID]
			if !ok {
				if len(byGUID) >= MaxUMADPorts || len(pairs) >= max {
					continue // no room: C tries the device's next port
				}
				i = len(pairs)
				byGUID[p.PortGUID] = i
				pairs = append(pairs, CAPair{})
			}
			switch n := counts[p.PortGUID]; {
			case n > 1 && isSMIDisabled(p):
				pairs[i].GSIName = ca.Name
			case n > 1:
				pairs[i].SMIName = ca.Name
			case n == 1:
				if !isSMIDisabled(p) {
					pairs[i].SMIName = ca.Name
				}
				pairs[i].GSIName = ca.Name
			default:
				return nil, fmt.Errorf("umad: SMI/GSI pairs: %s port %d GUID %#016x: %w", ca.Name, p.PortNum, p.PortGUID, ErrPairGUIDs)
			}
			break
		}
	}
	return pairs, nil
}

// portUp is !umad_check_active: the port exists and its state is above
// Down (Init, Armed and Active all count).
func portUp(ca *CA, port int) bool {
	return port >= 0 && port < CAMaxPorts && ca.Ports[port] != nil && ca.Ports[port].State > 1
}

// findUp is umad_find_active: the first port of ca above Down becomes the
// GSI's (gsi) or the SMI's preferred port. It reports whether it found one.
func findUp(pair *CAPair, ca *CA, gsi bool) bool {
	for i := 0; i <= ca.NumPorts; i++ {
		if portUp(ca, i) {
			if gsi {
				pair.GSIPreferredPort = i
			} else {
				pair.SMIPreferredPort = i
			}
			return true
		}
	}
	return false
}

// preferPorts is find_preferred_ports for the candidate pair and the
// device ca read for it; named says the caller named a device, which
// accepts the port whatever its state (rdma-core 862aede44, #1664). It
// reports success.
func preferPorts(pair *CAPair, ca *CA, gsi bool, port int, named bool) bool {
	if ca.NumPorts == 1 { // a one-port device: that port, whatever was asked
		for i := 0; i <= 1; i++ {
			if ca.Ports[i] != nil {
				port = i
				break
			}
		}
	}
	if port == 0 && ca.NodeType != 2 {
		// No port: the first port above Down, for both sides, from ca.
		smi := findUp(pair, ca, false)
		gsi := findUp(pair, ca, true)
		return smi && gsi
	}
	if !named && !portUp(ca, port) {
		return false
	}
	if pair.GSIName == pair.SMIName {
		pair.SMIPreferredPort, pair.GSIPreferredPort = port, port
		return true
	}
	if gsi {
		pair.GSIPreferredPort = port
	} else {
		pair.SMIPreferredPort = port
	}
	// The other side's port: the first port above Down of ca (the
	// device named, as in C, not the other device).
	found := findUp(pair, ca, !gsi)
	return named || found
}

// PairByCAName is umad_get_smi_gsi_pair_by_ca_name(name, port, pair,
// enforceSMI): the first pair of SMIGSIPairs(fsys, MaxUMADPorts) that has
// a GSI (and with enforceSMI an SMI), whose SMI or GSI is name (any,
// when name is ""), whose device (the GSI when name is the GSI or, without
// enforceSMI, the pair has no SMI; else the SMI) has the port (any, when
// port is 0), and whose preferred ports can be set: a port given with no
// name must be above Down (Init, Armed, Active), a port given with a name
// is taken in any state (#1664); a one-port device's port is taken
// whatever port was asked; with no port, both sides get the first port
// above Down of that device. The other side of a planarized pair gets the
// first port above Down of the same device, or 0.
//
// No match wraps ErrNoPort (ENODEV, C's -ENODEV). Deviations: where C
// finds no pairs at all it returns 0 with an empty pair (its callers then
// fail to open "" with -ENODEV); PairByCAName returns the ENODEV error at
// once. A port above 255 (C's uint8_t) or negative wraps EINVAL; a port
// of 10 or more matches no device (C reads past ports[]).
func PairByCAName(fsys fs.FS, name string, port int, enforceSMI bool) (CAPair, error) {
	if port < 0 || port > 255 {
		return CAPair{}, fmt.Errorf("umad: SMI/GSI pair of %q port %d: port out of 0..255: %w", name, port, syscall.EINVAL)
	}
	pairs, err := SMIGSIPairs(fsys, MaxUMADPorts)
	if err != nil {
		return CAPair{}, err
	}
	for _, cand := range pairs {
		if enforceSMI && cand.SMIName == "" || cand.GSIName == "" {
			continue
		}
		if name != "" && name != cand.GSIName && name != cand.SMIName {
			continue
		}
		gsi := !enforceSMI && cand.SMIName == "" || name != "" && name == cand.GSIName
		dev := cand.SMIName
		if gsi {
			dev = cand.GSIName
		}
		ca, err := GetCAWithoutGIDTables(fsys, dev)
		if err != nil {
			continue
		}
		if port != 0 && (port >= CAMaxPorts || ca.Ports[port] == nil) {
			continue
		}
		if preferPorts(&cand, ca, gsi, port, name != "") {
			return cand, nil
		}
	}
	what := "any device"
	if name != "" {
		what = name
	}
	if enforceSMI {
		what += " with an SMI"
	}
	return CAPair{}, fmt.Errorf("umad: no SMI/GSI pair for %s port %d: %w", what, port, ErrNoPort)
}
