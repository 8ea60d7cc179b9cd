package umad_test

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// The golden pairs below follow libibumad's umad.c (rdma-core master
// 691953d8d plus #1794): umad_get_smi_gsi_pairs, count_ports_by_guid,
// get_ca_pair_from_arr_by_guid, umad_get_smi_gsi_pair_by_ca_name,
// find_preferred_ports, umad_find_active, umad_check_active.
//
// They were also checked once against that libibumad itself: umad.c and
// sysfs.c of rdma-core 691953d8d built with a driver calling
// umad_get_smi_gsi_pairs (max 192, 2, 0) and 16
// umad_get_smi_gsi_pair_by_ca_name queries, run on these trees written
// to a tmpfs over /sys/class in a private mount namespace (2026-11-28):
// the same pairs, preferred ports and failures on the normal, four-plane,
// zero-GUID, lone-GSI/switch/RNIC, 130-device and 96-dual-port trees;
// on the 97-dual-port tree the same -1 (an error wrapping ErrPairGUIDs
// here, also from PairByCAName, where C returns -1 rather than -ENODEV);
// on the trees with Ethernet ports the differences #1794 makes, which
// that commit predates (it pairs rxe0 and lets an Ethernet port sharing
// the GUID overwrite the SMI name).

const planeGUID = 0x0002c903000a0001

var (
	up     = umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5}
	downed = umadtest.HostPort{Num: 1, State: 1, PhysState: 2}
)

func port(p umadtest.HostPort, num int, lid uint16) umadtest.HostPort {
	p.Num, p.LID = num, lid
	return p
}

func plane(p umadtest.HostPort, lid uint16, gsi bool) umadtest.HostPort {
	p.LID, p.GUID = lid, planeGUID
	if gsi {
		p.CapMask = 0x2659e848 | umadtest.IsSMDisabled
	}
	return p
}

// planes is a host with a Down one-port CA (mlx5_0), a planarized HCA
// (mlx5_1 the SMI side, mlx5_2 the GSI side: one port GUID, IsSMDisabled
// on mlx5_2), a two-port CA (mlx5_3: port 1 Down, port 2 Active) and a
// RoCE device (rxe0).
func planes() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, downed)
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, plane(up, 2, false))
	h.AddCA("mlx5_2", 1, 0x0002c90300003000, plane(up, 3, true))
	h.AddCA("mlx5_3", 1, 0x0002c90300004000, downed, port(up, 2, 4))
	h.AddCA("rxe0", 1, 0x5054_00ff_fe12_3400, umadtest.HostPort{Num: 1, State: 4, PhysState: 5, LinkLayer: "Ethernet"})
	return h
}

// oddHost has a lone IsSMDisabled port (a GSI without an SMI) and a
// switch (its own pair).
func oddHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5, CapMask: 0x2659e848 | umadtest.IsSMDisabled})
	h.AddCA("sw0", 2, 0x0002c90300002000, umadtest.HostPort{Num: 0, LID: 2, State: 4, PhysState: 5})
	return h
}

func pair(smi string, smiPort int, gsi string, gsiPort int) umad.CAPair {
	return umad.CAPair{SMIName: smi, SMIPreferredPort: smiPort, GSIName: gsi, GSIPreferredPort: gsiPort}
}

func TestSMIGSIPairs(t *testing.T) {
	normal := umadtest.NewHost(umadtest.New(nil))
	normal.AddCA("mlx5_0", 1, 0x0002c90300001000, up, port(downed, 2, 0))
	normal.AddCA("mlx5_1", 1, 0x0002c90300002000, port(up, 1, 2))

	// Four planes: the SMI side and three GSI sides; each GSI device
	// overwrites gsi_name, so the last one (alphabetically) stays.
	four := umadtest.NewHost(umadtest.New(nil))
	for i := range 4 {
		four.AddCA(fmt.Sprintf("mlx5_%d", i), 1, 0x0002c90300001000+uint64(i)<<12, plane(up, uint16(i+1), i > 0))
	}

	// An Ethernet port with the planes' GUID does not count (#1794): the
	// IB port alone has it, so it is a normal port.
	ethShare := umadtest.NewHost(umadtest.New(nil))
	ethShare.AddCA("mlx5_0", 1, 0x0002c90300001000, plane(up, 1, false))
	ethShare.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, State: 4, PhysState: 5, LinkLayer: "Ethernet", GUID: planeGUID})

	// Zero GUIDs (01650abb7): mlx5_0 pairs by port 2, mlx5_1 not at all.
	zero := umadtest.NewHost(umadtest.New(nil))
	zero.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, State: 4, PhysState: 5, ZeroGUID: true}, port(up, 2, 2))
	zero.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, State: 4, PhysState: 5, ZeroGUID: true})

	odd := oddHost()
	odd.AddCA("iwp0", 4, 0x0002c90300009000, up)

	tests := []struct {
		name string
		fsys fs.FS
		max  int
		want []umad.CAPair
	}{
		{"normal: one pair per device, by its first port's GUID", normal.FS, 192, []umad.CAPair{pair("mlx5_0", 0, "mlx5_0", 0), pair("mlx5_1", 0, "mlx5_1", 0)}},
		{"planarized, Down and two-port CAs, RoCE left out", planes().FS, 192,
			[]umad.CAPair{pair("mlx5_0", 0, "mlx5_0", 0), pair("mlx5_1", 0, "mlx5_2", 0), pair("mlx5_3", 0, "mlx5_3", 0)}},
		{"max 2", planes().FS, 2, []umad.CAPair{pair("mlx5_0", 0, "mlx5_0", 0), pair("mlx5_1", 0, "mlx5_2", 0)}},
		{"max 0", planes().FS, 0, nil},
		{"four planes: the last GSI device stays", four.FS, 192, []umad.CAPair{pair("mlx5_0", 0, "mlx5_3", 0)}},
		{"Ethernet port sharing the GUID is not a plane", ethShare.FS, 192, []umad.CAPair{pair("mlx5_0", 0, "mlx5_0", 0)}},
		{"zero GUIDs skipped", zero.FS, 192, []umad.CAPair{pair("mlx5_0", 0, "mlx5_0", 0)}},
		{"lone IsSMDisabled, switch, RNIC (not listed: is_ib_type)", odd.FS, 192, []umad.CAPair{pair("", 0, "mlx5_0", 0), pair("sw0", 0, "sw0", 0)}},
		{"no devices", fstest.MapFS{}, 192, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := umad.SMIGSIPairs(tt.fsys, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SMIGSIPairs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPairLimits: umad_get_cas_names reads at most UMAD_MAX_DEVICES (128)
// names, and count_ports_by_guid counts at most UMAD_MAX_PORTS (192)
// GUIDs: a device whose first GUID was not counted makes
// umad_get_smi_gsi_pairs return -1.
func TestPairLimits(t *testing.T) {
	many := umadtest.NewHost(umadtest.New(nil))
	for i := range 130 {
		many.AddCA(fmt.Sprintf("mlx5_%03d", i), 1, 0x0002c90300000000+uint64(i)<<8, port(up, 1, uint16(i+1)))
	}
	got, err := umad.SMIGSIPairs(many.FS, 192)
	if err != nil || len(got) != umad.MaxDevices || got[127] != pair("mlx5_127", 0, "mlx5_127", 0) {
		t.Errorf("130 devices: %d pairs (last %+v), %v; want 128, the last mlx5_127", len(got), got[len(got)-1], err)
	}
	names, err := umad.CANames(many.FS)
	if err != nil || len(names) != 128 || names[127] != "mlx5_127" {
		t.Errorf("CANames: %d names, %v; want 128", len(names), err)
	}

	// 97 two-port devices: 96 fill the 192 GUIDs; the 97th's port 1 GUID
	// has no count.
	dual := umadtest.NewHost(umadtest.New(nil))
	for i := range 97 {
		dual.AddCA(fmt.Sprintf("mlx5_%03d", i), 1, 0x0002c90300000000+uint64(i)<<8, port(up, 1, uint16(2*i+1)), port(up, 2, uint16(2*i+2)))
	}
	if got, err := umad.SMIGSIPairs(dual.FS, 192); !errors.Is(err, umad.ErrPairGUIDs) {
		t.Errorf("97 two-port devices: %d pairs, %v; want ErrPairGUIDs (C's -1)", len(got), err)
	}
	// 96 of them fit.
	dual = umadtest.NewHost(umadtest.New(nil))
	for i := range 96 {
		dual.AddCA(fmt.Sprintf("mlx5_%03d", i), 1, 0x0002c90300000000+uint64(i)<<8, port(up, 1, uint16(2*i+1)), port(up, 2, uint16(2*i+2)))
	}
	if got, err := umad.SMIGSIPairs(dual.FS, 192); err != nil || len(got) != 96 {
		t.Errorf("96 two-port devices: %d pairs, %v; want 96", len(got), err)
	}
}

func TestPairByCAName(t *testing.T) {
	h, odd := planes(), oddHost()
	tests := []struct {
		name    string
		fsys    fs.FS
		ca      string
		port    int
		smi     bool
		want    umad.CAPair
		wantErr error
	}{
		{"auto: the Down CA is skipped, the planes' SMI first", h.FS, "", 0, false, pair("mlx5_1", 1, "mlx5_2", 1), nil},
		{"auto with port 1: same", h.FS, "", 1, false, pair("mlx5_1", 1, "mlx5_2", 1), nil},
		{"auto enforcing SMI: same", h.FS, "", 0, true, pair("mlx5_1", 1, "mlx5_2", 1), nil},
		{"auto with port 2: the first device that has it Active", h.FS, "", 2, false, pair("mlx5_3", 2, "mlx5_3", 2), nil},
		{"named Down CA is taken (#1664)", h.FS, "mlx5_0", 0, false, pair("mlx5_0", 1, "mlx5_0", 1), nil},
		{"named Down CA and port, enforcing SMI", h.FS, "mlx5_0", 1, true, pair("mlx5_0", 1, "mlx5_0", 1), nil},
		{"named SMI side", h.FS, "mlx5_1", 1, true, pair("mlx5_1", 1, "mlx5_2", 1), nil},
		{"named GSI side", h.FS, "mlx5_2", 0, false, pair("mlx5_1", 1, "mlx5_2", 1), nil},
		{"named two-port CA, no port: first port above Down", h.FS, "mlx5_3", 0, false, pair("mlx5_3", 2, "mlx5_3", 2), nil},
		{"named two-port CA, Down port 1 taken (#1664)", h.FS, "mlx5_3", 1, false, pair("mlx5_3", 1, "mlx5_3", 1), nil},
		{"named CA without the port", h.FS, "mlx5_3", 3, false, umad.CAPair{}, syscall.ENODEV},
		{"RoCE device has no pair (#1794)", h.FS, "rxe0", 0, false, umad.CAPair{}, syscall.ENODEV},
		{"unknown CA", h.FS, "nope", 0, false, umad.CAPair{}, syscall.ENODEV},
		{"no device has port 9", h.FS, "", 9, false, umad.CAPair{}, syscall.ENODEV},
		{"port 12: past ports[]", h.FS, "", 12, false, umad.CAPair{}, syscall.ENODEV},
		{"port 256: beyond uint8_t", h.FS, "", 256, false, umad.CAPair{}, syscall.EINVAL},
		{"negative port", h.FS, "", -1, false, umad.CAPair{}, syscall.EINVAL},
		{"lone GSI: SMI side gets the same device's port", odd.FS, "", 0, false, pair("", 1, "mlx5_0", 1), nil},
		{"lone GSI skipped when enforcing SMI: the switch", odd.FS, "", 0, true, pair("sw0", 0, "sw0", 0), nil},
		{"switch by name, port 0", odd.FS, "sw0", 0, false, pair("sw0", 0, "sw0", 0), nil},
		{"no devices: ENODEV (C returns 0 and an empty pair)", fstest.MapFS{}, "", 0, false, umad.CAPair{}, syscall.ENODEV},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := umad.PairByCAName(tt.fsys, tt.ca, tt.port, tt.smi)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("PairByCAName(%q, %d, %v) = %+v, %v; want error %v", tt.ca, tt.port, tt.smi, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PairByCAName(%q, %d, %v): %v", tt.ca, tt.port, tt.smi, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PairByCAName(%q, %d, %v) (-want +got):\n%s", tt.ca, tt.port, tt.smi, diff)
			}
		})
	}
}

// TestOpenSMIPort checks umad_open_smi_port(3)'s statements: the port is
// picked as umad_open_port picks it, but only among SMI ports; -EOPNOTSUPP
// for an old ABI, -ENODEV when no SMI port resolves, -EINVAL for a port
// without an umad device; -EIO for an open failure is the open's own
// errno here (doc.go).
func TestOpenSMIPort(t *testing.T) {
	// The GSI side comes first in directory order.
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, plane(up, 1, true))
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, plane(up, 2, false))
	smi := &umad.Options{FS: h.FS, Open: h.Open, SMI: true}
	open := func(ca string, port int, o *umad.Options) (*umad.Port, error) {
		p, err := umad.OpenPort(ca, port, o)
		if err == nil {
			t.Cleanup(func() { p.Close() })
		}
		return p, err
	}
	if p, err := open("", 0, &umad.Options{FS: h.FS, Open: h.Open}); err != nil || p.CA() != "mlx5_0" {
		t.Fatalf("umad_open_port(NULL, 0): %v, %v; want mlx5_0 (the first Active port)", p, err)
	}
	if p, err := open("", 0, smi); err != nil || p.CA() != "mlx5_1" || p.Num() != 1 || p.Path() != "/dev/infiniband/umad1" {
		t.Fatalf("umad_open_smi_port(NULL, 0): %v, %v; want mlx5_1 port 1 on umad1", p, err)
	}
	if _, err := open("mlx5_0", 0, smi); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("umad_open_smi_port(mlx5_0, 0) = %v; want ENODEV (its only port has IsSMDisabled)", err)
	}
	// A CA and port given are taken unchecked by resolve_ca_name, with or
	// without enforce_smi.
	if p, err := open("mlx5_0", 1, smi); err != nil || p.Path() != "/dev/infiniband/umad0" {
		t.Errorf("umad_open_smi_port(mlx5_0, 1): %v, %v; want umad0 (named ports are not checked)", p, err)
	}
	if _, err := open("mlx5_1", 5, smi); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_open_smi_port(mlx5_1, 5) = %v; want EINVAL (no umad device)", err)
	}
	h.Deny("/dev/infiniband/umad1")
	if _, err := open("", 0, smi); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("umad_open_smi_port on a denied device = %v; want EACCES", err)
	}
	gsiOnly := umadtest.NewHost(umadtest.New(nil))
	gsiOnly.AddCA("mlx5_0", 1, 0x0002c90300001000, plane(up, 1, true))
	if _, err := open("", 0, &umad.Options{FS: gsiOnly.FS, Open: gsiOnly.Open, SMI: true}); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("umad_open_smi_port with only an IsSMDisabled port = %v; want ENODEV", err)
	}
	gsiOnly.FS[umad.SysInfinibandMAD+"/abi_version"] = &fstest.MapFile{Data: []byte("4\n")}
	if _, err := open("", 0, &umad.Options{FS: gsiOnly.FS, Open: gsiOnly.Open, SMI: true}); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Errorf("umad_open_smi_port with ABI 4 = %v; want EOPNOTSUPP", err)
	}
}
