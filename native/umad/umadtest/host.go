package umadtest

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"syscall"
	"testing/fstest"

	"github.com/ibscript/ibscript/native/umad"
)

// Host is a machine with a sysfs tree (an fstest.MapFS rooted at "/", in
// the kernel's text formats) and umad device nodes backed by a Kernel:
// pass FS and Open to umad.OpenPort or fabric/kernel. Add devices before
// sharing it; Open, Port and Deny are safe for concurrent use.
type Host struct {
	K  *Kernel
	FS fstest.MapFS

	mu    sync.Mutex // guards the fields below
	devs  map[string]*Port
	issm  map[string]*Port
	nextN int
	// Denied device paths fail to open with EACCES.
	denied map[string]bool
}

// NewHost returns a host with abi_version 5 and no devices.
func NewHost(k *Kernel) *Host {
	h := &Host{K: k, FS: fstest.MapFS{}, devs: map[string]*Port{}, issm: map[string]*Port{}, denied: map[string]bool{}}
	h.FS[umad.SysInfinibandMAD+"/abi_version"] = &fstest.MapFile{Data: []byte("5\n")}
	return h
}

// HostPort describes one port of AddCA.
type HostPort struct {
	Num       int
	LID       uint16
	State     int    // 4 Active ...
	PhysState int    // 5 LinkUp, 3 Disabled ...
	LinkLayer string // "" means InfiniBand; "Ethernet" is a RoCE port (LID 0, no SM)
	// GIDs are the port's GID table entries after index 0 (fe80::GUID):
	// index 1, 2, ... (a RoCE port's IPv4-mapped and IPv6 GIDs).
	GIDs [][16]byte
	// CapMask is the port's cap_mask; 0 means 0x2659e848 (an mlx5
	// HCA port's). IsSMDisabled (0x400) marks the GSI side of a
	// planarized HCA.
	CapMask uint32
	// GUID is the port GUID in gids/0; 0 means the CA's GUID plus the
	// port number. Planes of one HCA share it.
	GUID uint64
	// ZeroGUID writes a zero port GUID (a broken interface, which
	// libibumad's pairing skips).
	ZeroGUID bool
	// SMLID is the port's sm_lid, the LID of its master SM (the
	// port's PortInfo.MasterSMLID), written "0x%x" as the kernel does;
	// 0 means 0x1. An Ethernet port's is always 0x0. On a planarized
	// HCA each plane port names its plane's SM.
	SMLID uint16
}

// IsSMDisabled is CapabilityMask bit 10: the port has no SMA (the GSI
// side of a planarized HCA).
const IsSMDisabled = 0x400

// mlx5CapMask is an mlx5 HCA port's cap_mask, a HostPort's default.
const mlx5CapMask = 0x2659e848

var stateNames = map[int]string{0: "NOP", 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}
var physNames = map[int]string{1: "Sleep", 2: "Polling", 3: "Disabled", 4: "PortConfigurationTraining", 5: "LinkUp", 6: "LinkErrorRecovery", 7: "Phy Test"}

func guidText(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

// AddCA adds a device with node type 1 (CA) or 2 (switch) and its ports:
// sysfs files, a kernel port with the port's LID, and the next umadN.
func (h *Host) AddCA(name string, nodeType int, guid uint64, ports ...HostPort) {
	h.mu.Lock()
	defer h.mu.Unlock()
	dir := umad.SysInfiniband + "/" + name
	put := func(p, s string) { h.FS[p] = &fstest.MapFile{Data: []byte(s + "\n")} }
	types := map[int]string{1: "CA", 2: "switch", 3: "router", 4: "RNIC"}
	put(dir+"/node_type", fmt.Sprintf("%d: %s", nodeType, types[nodeType]))
	put(dir+"/node_guid", guidText(guid))
	put(dir+"/sys_image_guid", guidText(guid))
	put(dir+"/fw_ver", "16.35.2000")
	put(dir+"/hw_rev", "0x0")
	put(dir+"/hca_type", "MT4119")
	for _, p := range ports {
		pd := fmt.Sprintf("%s/ports/%d", dir, p.Num)
		ll := p.LinkLayer
		if ll == "" {
			ll = "InfiniBand"
		}
		put(pd+"/lid", fmt.Sprintf("0x%x", p.LID))
		put(pd+"/lid_mask_count", "0")
		sm := p.SMLID
		switch {
		case ll == "Ethernet":
			sm = 0 // a RoCE port has no SM
		case sm == 0:
			sm = 1
		}
		put(pd+"/sm_lid", fmt.Sprintf("0x%x", sm))
		put(pd+"/sm_sl", "0")
		put(pd+"/state", fmt.Sprintf("%d: %s", p.State, stateNames[p.State]))
		put(pd+"/phys_state", fmt.Sprintf("%d: %s", p.PhysState, physNames[p.PhysState]))
		put(pd+"/rate", "100 Gb/sec (4X EDR)")
		cm := p.CapMask
		if cm == 0 {
			cm = mlx5CapMask
		}
		put(pd+"/cap_mask", fmt.Sprintf("0x%08x", cm))
		put(pd+"/link_layer", ll)
		gid0 := [16]byte{0: 0xfe, 1: 0x80}
		pg := guid + uint64(p.Num)
		switch {
		case p.ZeroGUID:
			pg = 0
		case p.GUID != 0:
			pg = p.GUID
		}
		binary.BigEndian.PutUint64(gid0[8:], pg)
		table := append([][16]byte{gid0}, p.GIDs...)
		for i, g := range table {
			var t []string
			for j := 0; j < 16; j += 2 {
				t = append(t, fmt.Sprintf("%04x", binary.BigEndian.Uint16(g[j:])))
			}
			put(fmt.Sprintf("%s/gids/%d", pd, i), strings.Join(t, ":"))
		}
		put(pd+"/pkeys/0", "0xffff")
		put(pd+"/pkeys/1", "0x0000")
		n := h.nextN
		h.nextN++
		md := fmt.Sprintf("%s/umad%d", umad.SysInfinibandMAD, n)
		put(md+"/ibdev", name)
		put(md+"/port", fmt.Sprint(p.Num))
		put(md+"/dev", fmt.Sprintf("231:%d", n))
		kp := h.K.AddPort(p.LID)
		kp.SetGIDs(ll == "Ethernet", table...)
		h.devs[fmt.Sprintf("%s/umad%d", umad.DevDir, n)] = kp
		h.issm[fmt.Sprintf("%s/issm%d", umad.DevDir, n)] = kp
		md = fmt.Sprintf("%s/issm%d", umad.SysInfinibandMAD, n)
		put(md+"/ibdev", name)
		put(md+"/port", fmt.Sprint(p.Num))
		put(md+"/dev", fmt.Sprintf("231:%d", 64+n))
	}
}

// AddPlanarized adds a planarized HCA as libibumad's SMI/GSI pairing sees
// it (umad_get_smi_gsi_pairs): its GSI device gsi, one port (port 1, LID
// gsiLID, IsSMDisabled in its capability mask), and its SMI device smi,
// one port per plane (port P at planeLIDs[P-1]), every port Active with
// one port GUID, portGUID; each port is a umad device of its own. The
// devices' node GUIDs are nodeGUID and nodeGUID+1. Names sort as the
// caller wants them in directory order.
func (h *Host) AddPlanarized(gsi, smi string, nodeGUID, portGUID uint64, gsiLID uint16, planeLIDs ...uint16) {
	h.AddCA(gsi, 1, nodeGUID, HostPort{Num: 1, LID: gsiLID, State: 4, PhysState: 5, GUID: portGUID, CapMask: mlx5CapMask | IsSMDisabled})
	planes := make([]HostPort, len(planeLIDs))
	for i, lid := range planeLIDs {
		planes[i] = HostPort{Num: i + 1, LID: lid, State: 4, PhysState: 5, GUID: portGUID}
	}
	h.AddCA(smi, 1, nodeGUID+1, planes...)
}

// Deny makes opening path fail with EACCES, as for a user outside the
// rdma group.
func (h *Host) Deny(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.denied[path] = true
}

// Port returns the kernel port behind a device path.
func (h *Host) Port(path string) *Port {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.devs[path]
}

// Open opens a device node of the host (umadN or issmN), as umad.OpenDev
// would.
func (h *Host) Open(path string) (umad.Dev, error) {
	h.mu.Lock()
	kp, denied := h.devs[path], h.denied[path]
	sm := h.issm[path]
	h.mu.Unlock()
	switch {
	case denied:
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}
	case sm != nil:
		return sm.OpenISSM(path)
	case kp == nil:
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	}
	return kp.Open(path)
}
