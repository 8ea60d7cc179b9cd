package umad

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestStrtoul(t *testing.T) {
	tests := []struct {
		s    string
		base int
		want uint64
	}{
		{"4: ACTIVE", 0, 4},
		{"0x1a", 0, 26},
		{"0X1A", 0, 26},
		{"100 Gb/sec (4X EDR)", 0, 100},
		{"2.5 Gb/sec (1X SDR)", 0, 2},
		{"010", 0, 8}, // octal, as C does
		{"09", 0, 0},  // octal stops at 9
		{"  7\n", 0, 7},
		{"", 0, 0},
		{"abc", 0, 0},
		{"0x", 0, 0},
		{"fe80", 16, 0xfe80},
		{"0x2659e848", 0, 0x2659e848},
		{"-1", 0, ^uint64(0)},
		{"99999999999999999999999", 0, ^uint64(0)},
	}
	for _, tt := range tests {
		if got := strtoul(tt.s, tt.base); got != tt.want {
			t.Errorf("strtoul(%q, %d) = %d, want %d", tt.s, tt.base, got, tt.want)
		}
	}
}

type portSpec struct {
	state, phys string // "4: ACTIVE", "5: LinkUp"
	linkLayer   string // "" = file missing
	lid         string
	capMask     string
	pkeys       []string
	gid         string
}

var (
	active   = portSpec{state: "4: ACTIVE", phys: "5: LinkUp", linkLayer: "InfiniBand"}
	linkUp   = portSpec{state: "2: INIT", phys: "5: LinkUp", linkLayer: "InfiniBand"}
	polling  = portSpec{state: "1: DOWN", phys: "2: Polling", linkLayer: "InfiniBand"}
	disabled = portSpec{state: "1: DOWN", phys: "3: Disabled", linkLayer: "InfiniBand"}
	roce     = portSpec{state: "4: ACTIVE", phys: "5: LinkUp", linkLayer: "Ethernet"}
)

// addCA writes one device as the kernel prints it.
func addCA(m fstest.MapFS, name, nodeType string, guid uint16, ports map[int]portSpec) {
	dir := SysInfiniband + "/" + name
	m[dir+"/node_type"] = &fstest.MapFile{Data: []byte(nodeType + "\n")}
	m[dir+"/node_guid"] = &fstest.MapFile{Data: fmt.Appendf(nil, "0002:c903:0045:%04x\n", guid)}
	m[dir+"/sys_image_guid"] = &fstest.MapFile{Data: fmt.Appendf(nil, "0002:c903:0045:%04x\n", guid)}
	m[dir+"/fw_ver"] = &fstest.MapFile{Data: []byte("16.35.2000\n")}
	m[dir+"/hw_rev"] = &fstest.MapFile{Data: []byte("0x0\n")}
	m[dir+"/hca_type"] = &fstest.MapFile{Data: []byte("MT4119\n")}
	for n, p := range ports {
		pd := fmt.Sprintf("%s/ports/%d", dir, n)
		lid := p.lid
		if lid == "" {
			lid = fmt.Sprintf("0x%x", guid)
		}
		cm := p.capMask
		if cm == "" {
			cm = "0x2659e848"
		}
		files := map[string]string{
			"lid": lid, "lid_mask_count": "0", "sm_lid": "0x1", "sm_sl": "0", "state": p.state,
			"phys_state": p.phys, "rate": "100 Gb/sec (4X EDR)", "cap_mask": cm,
			"gids/0": fmt.Sprintf("fe80:0000:0000:0000:0002:c903:0045:%04x", guid+uint16(n)),
		}
		if p.gid != "" {
			files["gids/0"] = p.gid
		}
		if p.linkLayer != "" {
			files["link_layer"] = p.linkLayer
		}
		pk := p.pkeys
		if pk == nil {
			pk = []string{"0xffff", "0x0000"}
		}
		for i, v := range pk {
			files[fmt.Sprintf("pkeys/%d", i)] = v
		}
		if len(pk) == 0 {
			m[pd+"/pkeys"] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
		}
		for f, v := range files {
			m[pd+"/"+f] = &fstest.MapFile{Data: []byte(v + "\n")}
		}
	}
}

func addUMAD(m fstest.MapFS, n int, ca string, port int) {
	d := fmt.Sprintf("%s/umad%d", SysInfinibandMAD, n)
	m[d+"/ibdev"] = &fstest.MapFile{Data: []byte(ca + "\n")}
	m[d+"/port"] = &fstest.MapFile{Data: fmt.Appendf(nil, "%d\n", port)}
	m[d+"/dev"] = &fstest.MapFile{Data: fmt.Appendf(nil, "231:%d\n", n)}
	m[SysInfinibandMAD+"/abi_version"] = &fstest.MapFile{Data: []byte("5\n")}
}

// orderFS returns some directories in a given (readdir) order instead of
// MapFS's sorted one.
type orderFS struct {
	fstest.MapFS
	order map[string][]string
}

type orderedDir struct {
	fs.File
	ents []fs.DirEntry
}

func (d *orderedDir) ReadDir(n int) ([]fs.DirEntry, error) { e := d.ents; d.ents = nil; return e, nil }

func (o orderFS) Open(name string) (fs.File, error) {
	f, err := o.MapFS.Open(name)
	if err != nil {
		return nil, err
	}
	order, ok := o.order[name]
	if !ok {
		return f, nil
	}
	ents, err := f.(fs.ReadDirFile).ReadDir(-1)
	if err != nil {
		return nil, err
	}
	byName := map[string]fs.DirEntry{}
	for _, e := range ents {
		byName[e.Name()] = e
	}
	var out []fs.DirEntry
	for _, n := range order {
		out = append(out, byName[n])
	}
	return &orderedDir{File: f, ents: out}, nil
}

// realistic is the two-CA tree of the issue: a CA with port 1 Active and
// port 2 Down/Polling, and a switch (port 0 only), listed switch first.
func realistic() orderFS {
	m := fstest.MapFS{}
	addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: active, 2: polling})
	addCA(m, "sw0", "2: switch", 0x2000, map[int]portSpec{0: active})
	addUMAD(m, 0, "sw0", 0)
	addUMAD(m, 2, "mlx5_0", 2) // gap at umad1, numbering not in name order
	addUMAD(m, 3, "mlx5_0", 1)
	return orderFS{m, map[string][]string{SysInfiniband: {"sw0", "mlx5_0"}}}
}

func TestGetCA(t *testing.T) {
	fsys := realistic()
	ca, err := GetCA(fsys, "mlx5_0")
	if err != nil {
		t.Fatal(err)
	}
	if ca.NodeType != 1 || ca.NumPorts != 2 || ca.NodeGUID != 0x0002c90300451000 || ca.FWVer != "16.35.2000" || ca.HWVer != "0x0" || ca.CAType != "MT4119" {
		t.Errorf("CA = %+v", ca)
	}
	p := ca.Ports[1]
	want := &PortInfo{CAName: "mlx5_0", PortNum: 1, BaseLID: 0x1000, SMLID: 1, State: 4, PhysState: 5, Rate: 100,
		CapMask: 0x2659e848, GIDPrefix: 0xfe80000000000000, PortGUID: 0x0002c90300451001, PKeys: []uint16{0xffff, 0},
		LinkLayer: "InfiniBand"}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("port 1 (-want +got):\n%s", diff)
	}
	if ca.Ports[2] == nil || ca.Ports[2].State != 1 || ca.Ports[2].PhysState != 2 || ca.Ports[0] != nil {
		t.Errorf("ports = %v", ca.Ports)
	}
	sw, err := GetCA(fsys, "sw0")
	if err != nil || sw.NodeType != 2 || sw.Ports[0] == nil || sw.NumPorts != 0 {
		t.Errorf("switch = %+v, %v", sw, err)
	}
}

func TestSysfsErrors(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(m fstest.MapFS)
		want  error
		match string
	}{
		{"port 10", func(m fstest.MapFS) {
			addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{10: active})
		}, syscall.EIO, `port directory "10"`},
		{"no pkeys", func(m fstest.MapFS) {
			addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: {state: "4: ACTIVE", phys: "5: LinkUp", pkeys: []string{}}})
		}, syscall.EIO, "no P_Keys"},
		{"GUID with three groups", func(m fstest.MapFS) {
			addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: active})
			m[SysInfiniband+"/mlx5_0/node_guid"] = &fstest.MapFile{Data: []byte("0002:c903:0045\n")}
		}, syscall.EINVAL, "3 groups, want 4"},
		{"no gid", func(m fstest.MapFS) {
			addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: active})
			delete(m, SysInfiniband+"/mlx5_0/ports/1/gids/0")
		}, fs.ErrNotExist, "gids/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fstest.MapFS{}
			tt.edit(m)
			_, err := GetCA(m, "mlx5_0")
			if !errors.Is(err, tt.want) || !strings.Contains(fmt.Sprint(err), tt.match) {
				t.Errorf("GetCA: %v, want %v containing %q", err, tt.want, tt.match)
			}
		})
	}
}

func TestParsingRules(t *testing.T) {
	m := fstest.MapFS{}
	addCA(m, "mlx4_0", "1: CA", 0x10, map[int]portSpec{1: {state: "4: ACTIVE", phys: "5: LinkUp",
		gid: "fe80:0:0:0:2:c903:45:11", lid: "0x1a", capMask: "0x00000400", pkeys: []string{"0xffff", "0x8001", "0x7fff"}}})
	// A long fw_ver is cut at 19 bytes (20-byte buffer); no newline left.
	m[SysInfiniband+"/mlx4_0/fw_ver"] = &fstest.MapFile{Data: []byte("2.42.5000.12345678901234\n")}
	// Several newlines: cut at the last one only.
	m[SysInfiniband+"/mlx4_0/hca_type"] = &fstest.MapFile{Data: []byte("MT\n27500\n")}
	m[SysInfiniband+"/mlx4_0/ports/1/rate"] = &fstest.MapFile{Data: []byte("2.5 Gb/sec (1X SDR)\n")}
	ca, err := GetCA(m, "mlx4_0")
	if err != nil {
		t.Fatal(err)
	}
	p := ca.Ports[1]
	if ca.FWVer != "2.42.5000.123456789" || ca.CAType != "MT\n27500" || p.Rate != 2 || p.BaseLID != 26 ||
		p.CapMask != 0x400 || p.PortGUID != 0x0002c90300450011 || p.LinkLayer != "IB" ||
		!cmp.Equal(p.PKeys, []uint16{0xffff, 0x8001, 0x7fff}) {
		t.Errorf("CA %+v port %+v", ca, p)
	}
}

// resolveCase is one row of the section 3.2 resolution table.
type resolveCase struct {
	name     string
	fsys     fs.FS
	ca       string
	port     int
	smi      bool
	wantCA   string
	wantPort int
	wantErr  error
}

func TestResolve(t *testing.T) {
	two := realistic()

	m := fstest.MapFS{}
	addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: linkUp, 2: polling})
	addCA(m, "mlx5_1", "1: CA", 0x3000, map[int]portSpec{1: polling, 2: active})
	caOnlyLinkUp := orderFS{m, map[string][]string{SysInfiniband: {"mlx5_0", "mlx5_1"}}}
	caOnlyLinkUpFirst := orderFS{m, map[string][]string{SysInfiniband: {"mlx5_1", "mlx5_0"}}}

	m = fstest.MapFS{}
	addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: disabled})
	onlyDisabled := m

	m = fstest.MapFS{}
	addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: roce, 2: active})
	roceFirst := m

	m = fstest.MapFS{}
	addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: roce, 2: polling})
	roceActiveIBPolling := m // pass 1: no IB active or LinkUp; pass 2 takes port 1 (link layer not checked)

	m = fstest.MapFS{}
	addCA(m, "rnic0", "4: RNIC", 0x5000, map[int]portSpec{1: active})
	addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: {state: "4: ACTIVE", phys: "5: LinkUp"}})
	rnicAndNoLinkLayer := orderFS{m, map[string][]string{SysInfiniband: {"rnic0", "mlx5_0"}}}

	m = fstest.MapFS{}
	addCA(m, "mlx5_0", "1: CA", 0x1000, map[int]portSpec{1: {state: "4: ACTIVE", phys: "5: LinkUp", linkLayer: "InfiniBand", capMask: "0x2659ec48"}, 2: active})
	smDisabled := m

	tests := []resolveCase{
		{"null ca port 0: first active in readdir order (switch first)", two, "", 0, false, "sw0", 0, nil},
		{"ca port 0: its active port", two, "mlx5_0", 0, false, "mlx5_0", 1, nil},
		{"ca and port: no check", two, "mlx5_0", 7, false, "mlx5_0", 7, nil},
		{"ca and port: no check, even unknown CA", two, "nope", 1, false, "nope", 1, nil},
		{"null ca port 2: switch still wins, port 0", two, "", 2, false, "sw0", 0, nil},
		{"switch by name, port 0", two, "sw0", 0, false, "sw0", 0, nil},
		{"unknown ca port 0", two, "nope", 0, false, "", 0, syscall.ENODEV},
		{"only LinkUp: usable first LinkUp", caOnlyLinkUp, "", 0, false, "mlx5_1", 2, nil},
		{"ca with only LinkUp", caOnlyLinkUp, "mlx5_0", 0, false, "mlx5_0", 1, nil},
		{"active CA later in order wins over usable", caOnlyLinkUpFirst, "", 0, false, "mlx5_1", 2, nil},
		{"null ca port 2 filter", caOnlyLinkUp, "", 2, false, "mlx5_1", 2, nil},
		{"null ca port 1 filter: usable (not disabled)", caOnlyLinkUp, "", 1, false, "mlx5_0", 1, nil},
		{"only disabled: ENODEV, not mthca0", onlyDisabled, "", 0, false, "", 0, syscall.ENODEV},
		{"only disabled port given as filter", onlyDisabled, "", 1, false, "", 0, syscall.ENODEV},
		{"RoCE port before IB port", roceFirst, "", 0, false, "mlx5_0", 2, nil},
		{"RoCE port as filter fails", roceFirst, "", 1, false, "", 0, syscall.ENODEV},
		{"second pass ignores link layer", roceActiveIBPolling, "", 0, false, "mlx5_0", 1, nil},
		{"RNIC ignored, missing link_layer is IB", rnicAndNoLinkLayer, "", 0, false, "mlx5_0", 1, nil},
		{"enforce SMI skips IsSMDisabled", smDisabled, "", 0, true, "mlx5_0", 2, nil},
		{"without SMI the first port", smDisabled, "", 0, false, "mlx5_0", 1, nil},
		{"no /sys/class/infiniband", fstest.MapFS{}, "", 0, false, "", 0, syscall.ENODEV},
		{"negative port", two, "", -1, false, "", 0, syscall.EINVAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ca, port, err := Resolve(tt.fsys, tt.ca, tt.port, tt.smi)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Resolve(%q, %d) = %q, %d, %v; want error %v", tt.ca, tt.port, ca, port, err, tt.wantErr)
				}
				return
			}
			if err != nil || ca != tt.wantCA || port != tt.wantPort {
				t.Errorf("Resolve(%q, %d) = %q, %d, %v; want %q, %d", tt.ca, tt.port, ca, port, err, tt.wantCA, tt.wantPort)
			}
		})
	}
}

func TestGetPort(t *testing.T) {
	fsys := realistic()
	p, err := GetPort(fsys, "", 0)
	if err != nil || p.CAName != "sw0" || p.PortNum != 0 {
		t.Fatalf("GetPort(NULL, 0) = %+v, %v", p, err)
	}
	if err := ReleasePort(p); err != nil {
		t.Error(err)
	}
	// Given CA and port are not checked by resolution; reading fails EIO.
	if _, err := GetPort(fsys, "mlx5_0", 5); !errors.Is(err, syscall.EIO) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("GetPort(mlx5_0, 5) = %v, want EIO wrapping ErrNotExist", err)
	}
	if _, err := GetPort(fstest.MapFS{}, "", 0); !errors.Is(err, syscall.ENODEV) || !errors.Is(err, ErrNoPort) {
		t.Errorf("GetPort on an empty tree = %v, want ENODEV", err)
	}
}

func TestDevIndexAndABI(t *testing.T) {
	fsys := realistic()
	for _, tt := range []struct {
		ca        string
		port, idx int
	}{{"sw0", 0, 0}, {"mlx5_0", 2, 2}, {"mlx5_0", 1, 3}} {
		if n, err := DevIndex(fsys, tt.ca, tt.port); err != nil || n != tt.idx {
			t.Errorf("DevIndex(%s, %d) = %d, %v; want %d", tt.ca, tt.port, n, err, tt.idx)
		}
	}
	if _, err := DevIndex(fsys, "mlx5_0", 3); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("DevIndex of a port without umad: %v, want EINVAL", err)
	}
	if err := CheckABI(fsys); err != nil {
		t.Errorf("CheckABI: %v", err)
	}
	fsys.MapFS[SysInfinibandMAD+"/abi_version"] = &fstest.MapFile{Data: []byte("4\n")}
	err := CheckABI(fsys)
	var ae *ABIVersionError
	if !errors.As(err, &ae) || ae.Version != 4 || !errors.Is(err, syscall.EOPNOTSUPP) || !strings.Contains(err.Error(), "version 4") {
		t.Errorf("CheckABI(4) = %v", err)
	}
	delete(fsys.MapFS, SysInfinibandMAD+"/abi_version")
	if err := CheckABI(fsys); !errors.As(err, &ae) || ae.Version != -1 || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CheckABI(missing) = %v", err)
	}
	if !HasPorts(fsys) || HasPorts(fstest.MapFS{}) {
		t.Error("HasPorts")
	}
}

func TestCANames(t *testing.T) {
	fsys := realistic()
	addCA(fsys.MapFS, "rnic0", "4: RNIC", 0x5000, map[int]portSpec{1: active})
	addCA(fsys.MapFS, "a_name_of_20_chars__", "1: CA", 0x6000, map[int]portSpec{1: active})
	fsys.order[SysInfiniband] = []string{"sw0", "rnic0", "mlx5_0", "a_name_of_20_chars__"}
	names, err := CANames(fsys)
	if want := []string{"mlx5_0", "sw0"}; err != nil || !cmp.Equal(names, want) {
		t.Errorf("CANames = %v, %v; want %v (alphabetical, node types 1..3 as is_ib_type, < 20 chars)", names, err, want)
	}
	list, err := CADeviceList(fsys)
	if want := []string{"sw0", "mlx5_0"}; err != nil || !cmp.Equal(list, want) {
		t.Errorf("CADeviceList = %v, %v; want %v (readdir order, node types 1..3)", list, err, want)
	}
}

func FuzzSysfsParsing(f *testing.F) {
	for _, s := range []string{"4: ACTIVE", "0x1a", "fe80:0000:0000:0000:0002:c903:0045:1235", "0002:c903", "010", "-0x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		strtoul(s, 0)
		strtoul(s, 16)
		splitGroups("f", s, 4)
		splitGroups("f", s, 8)
		if s != "" && strings.Trim(s, "123456789") == "" && len(s) < 19 {
			var want uint64
			fmt.Sscan(s, &want)
			if got := strtoul(s, 0); got != want {
				t.Errorf("strtoul(%q) = %d, want %d", s, got, want)
			}
		}
	})
}

// TestRateFDR10: PortInfo.FDR10 is ibstat's is_fdr10 on the rate file:
// "FDR10" in any case just before the first ')', within 31 bytes.
func TestRateFDR10(t *testing.T) {
	for _, c := range []struct {
		rate string
		want bool
	}{
		{"10 Gb/sec (1X FDR10)\n", true}, // Soft-RoCE on a 10 Gb/s netdev
		{"40 Gb/sec (4X FDR10)\n", true},
		{"40 Gb/sec (4X fdr10)\n", true},
		{"40 Gb/sec (4X QDR)\n", false},
		{"56 Gb/sec (4X FDR)\n", false},
		{"FDR10)\n", true},
		{"DR10)\n", false},                             // ')' too close to the start
		{"100000000 Gb/sec (4X xxxxx FDR10)\n", false}, // the ')' is past C's rate[32]
	} {
		m := fstest.MapFS{}
		addCA(m, "rxe0", "1: CA", 0x10, map[int]portSpec{1: {state: "4: ACTIVE", phys: "5: LinkUp",
			gid: "fe80:0:0:0:2:c903:45:11", lid: "0x0", capMask: "0x00010000", pkeys: []string{"0xffff"}}})
		m[SysInfiniband+"/rxe0/ports/1/rate"] = &fstest.MapFile{Data: []byte(c.rate)}
		ca, err := GetCA(m, "rxe0")
		if err != nil {
			t.Fatal(err)
		}
		if got := ca.Ports[1].FDR10; got != c.want {
			t.Errorf("rate %q: FDR10 %v, want %v", c.rate, got, c.want)
		}
	}
}
