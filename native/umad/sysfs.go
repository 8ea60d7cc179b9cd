package umad

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
)

// Sysfs directories, relative to the root of the fs.FS given to the
// functions below (os.DirFS("/") in production).
const (
	SysInfiniband    = "sys/class/infiniband"
	SysInfinibandMAD = "sys/class/infiniband_mad"
	DevDir           = "/dev/infiniband"
)

// libibumad limits.
const (
	CANameLen    = 20  // UMAD_CA_NAME_LEN: names this long or longer are not listed
	CAMaxPorts   = 10  // UMAD_CA_MAX_PORTS: port directories 0..9
	MaxUMADPorts = 192 // UMAD_MAX_PORTS: umad0..umad191 are searched
)

// CA is umad_ca_t: one device of /sys/class/infiniband.
type CA struct {
	Name       string
	NodeType   int // 1 CA, 2 switch, 3 router
	NumPorts   int // highest port number present
	FWVer      string
	HWVer      string
	CAType     string
	NodeGUID   uint64 // the number as sysfs prints it (libibumad keeps it big-endian)
	SystemGUID uint64
	// Ports is indexed by port number; absent ports are nil.
	Ports [CAMaxPorts]*PortInfo
}

// PortInfo is umad_port_t: one port's sysfs attributes. Numbers are host
// values: CapMask, GIDPrefix and PortGUID are the numbers sysfs prints,
// not libibumad's big-endian copies (umad-abi.md section 13 #11).
type PortInfo struct {
	CAName    string
	PortNum   int
	BaseLID   uint16
	LMC       uint8
	SMLID     uint16
	SMSL      uint8
	State     int // 1 Down, 2 Init, 3 Armed, 4 Active
	PhysState int // 3 Disabled, 5 LinkUp ...
	Rate      int // leading integer of the rate file (Gb/s)
	CapMask   uint32
	GIDPrefix uint64
	PortGUID  uint64
	PKeys     []uint16 // indexed by P_Key table index
	LinkLayer string   // "InfiniBand", "Ethernet"; "IB" when the file is missing
	// GIDs is the whole GID table (gids/<i>, by index; unreadable or
	// absent entries zero), read only for Ethernet (RoCE) ports, where
	// the source GID of a MAD's GRH is picked from it. libibumad reads
	// gids/0 alone.
	GIDs [][16]byte
	// FDR10 is ibstat's is_fdr10: the rate file (its first 31 bytes)
	// has "FDR10", in any case, just before its first ')'. Mellanox FDR10
	// links say so, and so does Soft-RoCE on a 10 Gb/s netdev ("10
	// Gb/sec (1X FDR10)"). libibumad itself does not read it.
	FDR10 bool
}

// strtoul is C's strtoul(s, NULL, base) for base 0 or 16: leading white
// space and sign, base detection (0x hex, 0 octal), stop at the first
// non-digit, 0 when nothing parses, saturation on overflow.
func strtoul(s string, base int) uint64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	hasHex := len(s) >= 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && digitVal(s[2]) < 16
	switch {
	case (base == 0 || base == 16) && hasHex:
		s, base = s[2:], 16
	case base == 0 && s != "" && s[0] == '0':
		base = 8
	case base == 0:
		base = 10
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		if v > (^uint64(0)-uint64(d))/uint64(base) {
			return ^uint64(0)
		}
		v = v*uint64(base) + uint64(d)
	}
	if neg {
		v = -v
	}
	return v
}

func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// readString is libibumad's sys_read_string: at most max-1 bytes of the
// file, cut at the last newline.
func readString(fsys fs.FS, name string, max int) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, max)
	n, err := io.ReadAtLeast(f, buf, 1)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", &fs.PathError{Op: "read", Path: name, Err: err}
	}
	if n >= max {
		n = max - 1
	}
	s := string(buf[:n])
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s, nil
}

// readUint is sys_read_uint: strtoul(s, NULL, 0) of a 32-byte read.
func readUint(fsys fs.FS, name string) (uint64, error) {
	s, err := readString(fsys, name, 32)
	if err != nil {
		return 0, err
	}
	return strtoul(s, 0), nil
}

// splitGroups is strsep(&s, ": \t\n") n times; fewer tokens is EINVAL.
func splitGroups(name, s string, n int) ([]uint16, error) {
	g := make([]uint16, n)
	rest, ok := s, true
	for i := range n {
		if !ok {
			return nil, &fs.PathError{Op: "parse", Path: name,
				Err: fmt.Errorf("%q has %d groups, want %d: %w", s, i, n, syscall.EINVAL)}
		}
		j := strings.IndexAny(rest, ": \t\n")
		tok := rest
		if j >= 0 {
			tok, rest = rest[:j], rest[j+1:]
		} else {
			ok = false
		}
		g[i] = uint16(strtoul(tok, 16))
	}
	return g, nil
}

// readGUID is sys_read_guid: four 16-bit hex groups.
func readGUID(fsys fs.FS, name string) (uint64, error) {
	s, err := readString(fsys, name, 32)
	if err != nil {
		return 0, err
	}
	g, err := splitGroups(name, s, 4)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, x := range g {
		v = v<<16 | uint64(x)
	}
	return v, nil
}

// readGID is sys_read_gid: eight 16-bit hex groups, as prefix and GUID.
func readGID(fsys fs.FS, name string) (prefix, guid uint64, err error) {
	s, err := readString(fsys, name, 64)
	if err != nil {
		return 0, 0, err
	}
	g, err := splitGroups(name, s, 8)
	if err != nil {
		return 0, 0, err
	}
	for _, x := range g[:4] {
		prefix = prefix<<16 | uint64(x)
	}
	for _, x := range g[4:] {
		guid = guid<<16 | uint64(x)
	}
	return prefix, guid, nil
}

// readGIDTable reads every gids/<i> entry of a port into a table by
// index; entries that do not read as a GID stay zero.
func readGIDTable(fsys fs.FS, dir string) [][16]byte {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	var t [][16]byte
	for _, e := range ents {
		n := e.Name()
		if n == "" || strings.Trim(n, "0123456789") != "" || len(n) > 4 {
			continue
		}
		i := int(strtoul(n, 10))
		prefix, guid, err := readGID(fsys, dir+"/"+n)
		if err != nil || prefix == 0 && guid == 0 {
			continue
		}
		for len(t) <= i {
			t = append(t, [16]byte{})
		}
		binary.BigEndian.PutUint64(t[i][:8], prefix)
		binary.BigEndian.PutUint64(t[i][8:], guid)
	}
	return t
}

// readDirUnsorted lists a directory in the order the FS gives (readdir
// order for os.DirFS), unlike fs.ReadDir, which sorts.
func readDirUnsorted(fsys fs.FS, name string) ([]fs.DirEntry, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, ok := f.(fs.ReadDirFile)
	if !ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
	}
	return ents, nil
}

// atoi is C's atoi: leading decimal digits, 0 when none.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<30; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// ErrIO marks libibumad's -EIO for sysfs failures; errors wrap it and the
// underlying cause.
var ErrIO = syscall.EIO

// GetCA reads one device as umad_get_ca: node_type, node_guid and
// sys_image_guid and the ports/ directory are required, every port
// directory name must be 0..9 and every port readable, else the error
// wraps syscall.EIO (a missing ports/ directory: ENOENT).
func GetCA(fsys fs.FS, name string) (*CA, error) { return getCA(fsys, name, true) }

// GetCAWithoutGIDTables is GetCA without the GID tables of RoCE ports
// (PortInfo.GIDs stays nil): what libibumad reads, gids/0 only. A RoCE
// port's table is long (1024 entries on Soft-RoCE, 255 on mlx5), one
// sysfs file each: resolving a port reads every CA, so it uses this.
func GetCAWithoutGIDTables(fsys fs.FS, name string) (*CA, error) { return getCA(fsys, name, false) }

func getCA(fsys fs.FS, name string, gids bool) (*CA, error) {
	dir := path.Join(SysInfiniband, name)
	ca := &CA{Name: name}
	nt, err := readUint(fsys, dir+"/node_type")
	if err != nil {
		return nil, fmt.Errorf("umad: CA %s: %w", name, err)
	}
	ca.NodeType = int(nt)
	ca.FWVer, _ = readString(fsys, dir+"/fw_ver", 20)
	ca.HWVer, _ = readString(fsys, dir+"/hw_rev", 20)
	ca.CAType, _ = readString(fsys, dir+"/hca_type", 40)
	if ca.NodeGUID, err = readGUID(fsys, dir+"/node_guid"); err != nil {
		return nil, fmt.Errorf("umad: CA %s: %w", name, err)
	}
	if ca.SystemGUID, err = readGUID(fsys, dir+"/sys_image_guid"); err != nil {
		return nil, fmt.Errorf("umad: CA %s: %w", name, err)
	}
	ents, err := fs.ReadDir(fsys, dir+"/ports") // scandir with alphasort
	if err != nil {
		return nil, fmt.Errorf("umad: CA %s: %w (%w)", name, err, syscall.ENOENT)
	}
	for _, e := range ents {
		n := e.Name()
		num := 0
		if n != "0" {
			num = atoi(n)
			if num <= 0 || num >= CAMaxPorts {
				return nil, fmt.Errorf("umad: CA %s: port directory %q is not 0..%d: %w", name, n, CAMaxPorts-1, syscall.EIO)
			}
		}
		p, err := readPort(fsys, name, num, gids)
		if err != nil {
			return nil, fmt.Errorf("%w (%w)", err, syscall.EIO)
		}
		ca.Ports[num] = p
		ca.NumPorts = max(ca.NumPorts, num)
	}
	return ca, nil
}

// readPort is libibumad's get_port: every attribute but link_layer is
// required, and at least one P_Key. gids reads a RoCE port's GID table.
func readPort(fsys fs.FS, ca string, num int, gids bool) (*PortInfo, error) {
	dir := fmt.Sprintf("%s/%s/ports/%d", SysInfiniband, ca, num)
	p := &PortInfo{CAName: ca, PortNum: num}
	wrap := func(err error) error { return fmt.Errorf("umad: %s port %d: %w", ca, num, err) }
	var v [7]uint64
	for i, f := range []string{"lid_mask_count", "sm_lid", "sm_sl", "lid", "state", "phys_state", "rate"} {
		x, err := readUint(fsys, dir+"/"+f)
		if err != nil {
			return nil, wrap(err)
		}
		v[i] = x
	}
	p.LMC, p.SMLID, p.SMSL, p.BaseLID = uint8(v[0]), uint16(v[1]), uint8(v[2]), uint16(v[3])
	p.State, p.PhysState, p.Rate = int(uint32(v[4])), int(uint32(v[5])), int(uint32(v[6]))
	if s, err := readString(fsys, dir+"/rate", 32); err == nil {
		if i := strings.IndexByte(s, ')'); i >= 5 && strings.EqualFold(s[i-5:i], "fdr10") {
			p.FDR10 = true
		}
	}
	cm, err := readUint(fsys, dir+"/cap_mask")
	if err != nil {
		return nil, wrap(err)
	}
	p.CapMask = uint32(cm)
	if p.LinkLayer, err = readString(fsys, dir+"/link_layer", CANameLen); err != nil {
		p.LinkLayer = "IB"
	}
	if p.GIDPrefix, p.PortGUID, err = readGID(fsys, dir+"/gids/0"); err != nil {
		return nil, wrap(err)
	}
	if gids && p.LinkLayer == "Ethernet" {
		p.GIDs = readGIDTable(fsys, dir+"/gids")
	}
	ents, err := fs.ReadDir(fsys, dir+"/pkeys")
	if err != nil {
		return nil, wrap(err)
	}
	var idx []int
	for _, e := range ents {
		if n := e.Name(); n != "" && strings.Trim(n, "0123456789") == "" {
			idx = append(idx, int(strtoul(n, 0)))
		}
	}
	if len(idx) == 0 {
		return nil, wrap(fmt.Errorf("no P_Keys in %s/pkeys: %w", dir, syscall.EIO))
	}
	p.PKeys = make([]uint16, len(idx))
	for _, i := range idx {
		if i >= len(p.PKeys) {
			continue // libibumad would write past its array; ibscript skips
		}
		x, _ := readUint(fsys, fmt.Sprintf("%s/pkeys/%d", dir, i))
		p.PKeys[i] = uint16(x)
	}
	return p, nil
}

// CANames lists the devices as umad_get_cas_names(cas, MaxDevices):
// alphabetical, names shorter than CANameLen, node types 1..3 (is_ib_type:
// an RNIC is left out), the first MaxDevices of them. A missing
// /sys/class/infiniband gives an empty list (libibumad invents "mthca0";
// ibscript does not).
func CANames(fsys fs.FS) ([]string, error) {
	return ibDevices(fsys, fs.ReadDir, func(n string, names []string) bool {
		return len(n) < CANameLen && len(names) < MaxDevices
	})
}

// CADeviceList lists the devices as umad_get_ca_device_list: directory
// order, node types 1..3 only.
func CADeviceList(fsys fs.FS) ([]string, error) {
	return ibDevices(fsys, readDirUnsorted, func(n string, _ []string) bool {
		return n != "." && n != ".." && len(n) < CANameLen
	})
}

// ibDevices lists the devices of SysInfiniband in the order read gives
// them whose node type is 1..3 (is_ib_type) and that take takes (given
// the names listed so far); a missing directory is an empty list.
func ibDevices(fsys fs.FS, read func(fs.FS, string) ([]fs.DirEntry, error), take func(n string, names []string) bool) ([]string, error) {
	ents, err := read(fsys, SysInfiniband)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("umad: list CAs: %w", err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if !take(n, names) {
			continue
		}
		if nt, err := readUint(fsys, path.Join(SysInfiniband, n, "node_type")); err == nil && nt >= 1 && nt <= 3 {
			names = append(names, n)
		}
	}
	return names, nil
}

const capIsSMDisabled = 0x400

func isIB(p *PortInfo) bool { return p.LinkLayer == "InfiniBand" || p.LinkLayer == "IB" }

// pick is libibumad's port picker for one CA: 1 active, 0 usable, -1 fail.
func pick(fsys fs.FS, name string, port *int, enforceSMI bool) int {
	ca, err := GetCAWithoutGIDTables(fsys, name)
	if err != nil {
		return -1
	}
	if ca.NodeType == 2 {
		*port = 0
		return 1
	}
	smDisabled := func(p *PortInfo) bool { return enforceSMI && p.CapMask&capIsSMDisabled != 0 }
	if *port > 0 {
		if *port >= CAMaxPorts || ca.Ports[*port] == nil {
			return -1
		}
		p := ca.Ports[*port]
		if !isIB(p) || smDisabled(p) {
			return -1
		}
		if p.State == 4 {
			return 1
		}
		if p.PhysState != 3 {
			return 0
		}
		return -1
	}
	usable := -1
	for i := 0; i <= ca.NumPorts; i++ {
		p := ca.Ports[i]
		if p == nil || !isIB(p) || smDisabled(p) {
			continue
		}
		if usable < 0 && p.PhysState == 5 {
			usable = i
		}
		if p.State == 4 {
			*port = i
			return 1
		}
	}
	if usable >= 0 {
		*port = usable
		return 0
	}
	for i := 0; i <= ca.NumPorts; i++ {
		p := ca.Ports[i]
		if p == nil || smDisabled(p) {
			continue
		}
		if p.PhysState != 3 {
			*port = i
			return 0
		}
	}
	return -1
}

// ErrNoPort is wrapped by Resolve when no CA or port matches
// (libibumad's -ENODEV); it matches syscall.ENODEV with errors.Is.
var ErrNoPort = fmt.Errorf("no matching InfiniBand port: %w", syscall.ENODEV)

// Resolve picks the CA and port as libibumad's resolve_ca_name does for
// umad_get_port and umad_open_port: ca and port given are used without a
// check; a ca with port 0 picks that CA's best port; an empty ca walks
// the devices in directory order, taking the first active port (port, if
// non-zero, acts as a filter, except that a switch always gives port 0)
// or else the first usable one. enforceSMI skips ports whose
// CapabilityMask has IsSMDisabled (umad_open_smi_port). Where libibumad
// falls back to "mthca0" port 1, Resolve returns an error wrapping
// ErrNoPort (syscall.ENODEV).
func Resolve(fsys fs.FS, ca string, port int, enforceSMI bool) (string, int, error) {
	if port < 0 {
		return "", 0, fmt.Errorf("umad: port %d: %w", port, syscall.EINVAL)
	}
	if ca != "" && port != 0 {
		return ca, port, nil
	}
	if ca != "" {
		p := port
		if pick(fsys, ca, &p, enforceSMI) < 0 {
			return "", 0, fmt.Errorf("umad: CA %s: %w", ca, ErrNoPort)
		}
		return ca, p, nil
	}
	names, err := CADeviceList(fsys)
	if err != nil {
		return "", 0, err
	}
	usableCA, usablePort := "", 0
	for _, n := range names {
		p := port
		switch pick(fsys, n, &p, enforceSMI) {
		case 1:
			return n, p, nil
		case 0:
			if usableCA == "" {
				usableCA, usablePort = n, p
			}
		}
	}
	if usableCA != "" {
		return usableCA, usablePort, nil
	}
	if port != 0 {
		return "", 0, fmt.Errorf("umad: no CA has a usable port %d: %w", port, ErrNoPort)
	}
	return "", 0, fmt.Errorf("umad: no CA in /%s has a usable port: %w", SysInfiniband, ErrNoPort)
}

// GetPort is umad_get_port: resolve (ca, port) and read that port's
// attributes. Resolution failures wrap ErrNoPort (ENODEV), sysfs failures
// syscall.EIO.
func GetPort(fsys fs.FS, ca string, port int) (*PortInfo, error) {
	name, num, err := Resolve(fsys, ca, port, false)
	if err != nil {
		return nil, err
	}
	p, err := readPort(fsys, name, num, true)
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", err, syscall.EIO)
	}
	return p, nil
}

// ReleasePort is umad_release_port: it frees nothing in Go and always
// succeeds; it exists for callers that mirror the C API.
func ReleasePort(p *PortInfo) error { return nil }

// DevIndex is libibumad's dev_to_umad_id: the N of the first umadN
// (N < MaxUMADPorts) whose ibdev and port match. The error wraps
// syscall.EINVAL when none does.
func DevIndex(fsys fs.FS, ca string, port int) (int, error) {
	for i := range MaxUMADPorts {
		dir := fmt.Sprintf("%s/umad%d", SysInfinibandMAD, i)
		dev, err := readString(fsys, dir+"/ibdev", CANameLen)
		if err != nil || dev != ca {
			continue
		}
		p, err := readUint(fsys, dir+"/port")
		if err != nil || int(p) != port {
			continue
		}
		return i, nil
	}
	return 0, fmt.Errorf("umad: no /%s/umadN for %s port %d: %w", SysInfinibandMAD, ca, port, syscall.EINVAL)
}

// ABIVersionError is returned when the kernel's umad ABI is missing or
// older than ABIVersion; it matches syscall.EOPNOTSUPP.
type ABIVersionError struct {
	Version int   // the version read; -1 when it could not be read
	Err     error // the read error, if any
}

func (e *ABIVersionError) Error() string {
	if e.Version < 0 {
		return fmt.Sprintf("umad: cannot read the umad ABI version (/%s/abi_version): %v; is the ib_umad module loaded?", SysInfinibandMAD, e.Err)
	}
	return fmt.Sprintf("umad: kernel umad ABI version %d (/%s/abi_version) is too old: need %d", e.Version, SysInfinibandMAD, ABIVersion)
}

func (e *ABIVersionError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Err, syscall.EOPNOTSUPP}
	}
	return []error{syscall.EOPNOTSUPP}
}

// CheckABI reads abi_version as umad_open_port does.
func CheckABI(fsys fs.FS) error {
	v, err := readUint(fsys, SysInfinibandMAD+"/abi_version")
	if err != nil {
		return &ABIVersionError{Version: -1, Err: err}
	}
	if v < ABIVersion {
		return &ABIVersionError{Version: int(v)}
	}
	return nil
}

// HasPorts reports whether /sys/class/infiniband_mad lists an umad port.
func HasPorts(fsys fs.FS) bool {
	ents, err := fs.ReadDir(fsys, SysInfinibandMAD)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "umad"); ok {
			if _, err := strconv.Atoi(n); err == nil {
				return true
			}
		}
	}
	return false
}
