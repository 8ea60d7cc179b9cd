package topo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// SnapshotSchema names the JSON layout of WriteSnapshot.
const SnapshotSchema = "ibscript.topology.v1"

type snapshot struct {
	Schema string     `json:"schema"`
	Nodes  []snapNode `json:"nodes"`
}

type snapNode struct {
	ID            string     `json:"id,omitempty"`
	Desc          string     `json:"desc"`
	Type          string     `json:"type"`
	NumPorts      int        `json:"num_ports"`
	GUID          string     `json:"guid"`
	SysGUID       string     `json:"sys_guid,omitempty"`
	VendorID      uint32     `json:"vendor_id,omitempty"`
	DeviceID      uint16     `json:"device_id,omitempty"`
	Revision      uint32     `json:"revision,omitempty"`
	EnhancedPort0 bool       `json:"enhanced_port0,omitempty"`
	Planarized    bool       `json:"planarized,omitempty"`
	Ports         []snapPort `json:"ports"`
}

type snapPort struct {
	Num             int       `json:"num"`
	GUID            string    `json:"guid,omitempty"`
	LID             uint16    `json:"lid,omitempty"`
	LMC             uint8     `json:"lmc,omitempty"`
	WidthEnabled    uint8     `json:"width_enabled,omitempty"`
	WidthActive     uint8     `json:"width_active,omitempty"`
	SpeedEnabled    uint8     `json:"speed_enabled,omitempty"`
	SpeedActive     uint8     `json:"speed_active,omitempty"`
	SpeedExtEnabled uint8     `json:"speed_ext_enabled,omitempty"`
	SpeedExtActive  uint8     `json:"speed_ext_active,omitempty"`
	CapMask         uint32    `json:"cap_mask,omitempty"`
	State           uint8     `json:"state,omitempty"`
	PhysState       uint8     `json:"phys_state,omitempty"`
	Plane           uint8     `json:"plane,omitempty"`
	Remote          *snapLink `json:"remote,omitempty"`
}

// snapLink names the other end of a cable by node index and port.
type snapLink struct {
	Node int `json:"node"` // index in nodes
	Port int `json:"port"`
}

func hex64(v uint64) string { return fmt.Sprintf("0x%016x", v) }

func parseHex64(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
}

// WriteSnapshot writes f as a JSON snapshot (schema SnapshotSchema) that
// ReadSnapshot reloads into the same Fabric: every node and port field of
// the model and the cables.
func WriteSnapshot(w io.Writer, f *Fabric) error {
	idx := make(map[*Node]int, len(f.Nodes))
	for i, n := range f.Nodes {
		idx[n] = i
	}
	s := snapshot{Schema: SnapshotSchema, Nodes: make([]snapNode, 0, len(f.Nodes))}
	for _, n := range f.Nodes {
		sn := snapNode{ID: n.ID, Desc: n.Desc, Type: n.Type.String(), NumPorts: n.NumPorts, GUID: hex64(n.GUID),
			VendorID: n.VendorID, DeviceID: n.DeviceID, Revision: n.Revision, EnhancedPort0: n.EnhancedPort0, Planarized: n.Planarized, Ports: []snapPort{}}
		if n.SysGUID != 0 {
			sn.SysGUID = hex64(n.SysGUID)
		}
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			sp := snapPort{Num: p.Num, LID: p.LID, LMC: p.LMC, WidthEnabled: p.WidthEnabled, WidthActive: p.WidthActive,
				SpeedEnabled: p.SpeedEnabled, SpeedActive: p.SpeedActive, SpeedExtEnabled: p.SpeedExtEnabled,
				SpeedExtActive: p.SpeedExtActive, CapMask: p.CapMask, State: p.State, PhysState: p.PhysState, Plane: p.Plane}
			if p.GUID != 0 {
				sp.GUID = hex64(p.GUID)
			}
			if p.Remote != nil {
				if j, ok := idx[p.Remote.Node]; ok {
					sp.Remote = &snapLink{Node: j, Port: p.Remote.Num}
				}
			}
			sn.Ports = append(sn.Ports, sp)
		}
		s.Nodes = append(s.Nodes, sn)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", " ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	return bw.Flush()
}

// ReadSnapshot reads a snapshot WriteSnapshot wrote; name is for errors.
func ReadSnapshot(r io.Reader, name string) (*Fabric, error) {
	// The schema first: another JSON document (a tool's --format json,
	// ibscript topology's graph) is named as what it is not, not by the
	// first field of it that does not fit a snapshot's.
	var head struct {
		Schema string          `json:"schema"`
		Nodes  json.RawMessage `json:"nodes"`
	}
	if err := json.NewDecoder(r).Decode(&head); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if head.Schema != SnapshotSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q (the JSON fabric.save writes)", name, head.Schema, SnapshotSchema)
	}
	s := snapshot{Schema: head.Schema}
	if len(head.Nodes) > 0 {
		if err := json.Unmarshal(head.Nodes, &s.Nodes); err != nil {
			return nil, fmt.Errorf("%s: nodes: %w", name, err)
		}
	}
	f := &Fabric{}
	types := map[string]NodeType{"CA": CA, "Switch": Switch, "Router": Router}
	if len(s.Nodes) > MaxNodes {
		return nil, fmt.Errorf("%s: %d nodes, more than %d (a subnet has %d unicast LIDs)", name, len(s.Nodes), MaxNodes, maxUnicastLID)
	}
	if len(s.Nodes) == 0 {
		return nil, fmt.Errorf("%s: not a topology: no nodes", name)
	}
	ports := 0
	byGUID := make(map[uint64]int, len(s.Nodes))
	for i, sn := range s.Nodes {
		if ports += sn.NumPorts + 1; ports > MaxPorts {
			return nil, fmt.Errorf("%s: nodes[%d]: more than %d ports in all (topo.MaxPorts)", name, i, MaxPorts)
		}
		t, ok := types[sn.Type]
		if !ok {
			return nil, fmt.Errorf("%s: nodes[%d]: type %q", name, i, sn.Type)
		}
		guid, err := parseHex64(sn.GUID)
		if err != nil {
			return nil, fmt.Errorf("%s: nodes[%d]: guid %q", name, i, sn.GUID)
		}
		if j, dup := byGUID[guid]; dup {
			// Nodes are known by GUID (discovery, Diff): two with one
			// GUID cannot come from a fabric.save.
			return nil, fmt.Errorf("%s: nodes[%d]: guid 0x%016x is nodes[%d]'s too", name, i, guid, j)
		}
		byGUID[guid] = i
		sys, err := parseHex64(sn.SysGUID)
		if err != nil {
			return nil, fmt.Errorf("%s: nodes[%d]: sys_guid %q", name, i, sn.SysGUID)
		}
		if sn.NumPorts < 0 || sn.NumPorts > MaxNodePorts {
			return nil, fmt.Errorf("%s: nodes[%d]: num_ports %d", name, i, sn.NumPorts)
		}
		n := &Node{ID: sn.ID, Desc: sn.Desc, Type: t, NumPorts: sn.NumPorts, GUID: guid, SysGUID: sys,
			VendorID: sn.VendorID, DeviceID: sn.DeviceID, Revision: sn.Revision, EnhancedPort0: sn.EnhancedPort0,
			Planarized: sn.Planarized, Ports: make([]*Port, sn.NumPorts+1)}
		if err := snapshotPorts(name, i, &sn, n); err != nil {
			return nil, err
		}
		f.Nodes = append(f.Nodes, n)
	}
	if err := snapshotCables(name, s.Nodes, f); err != nil {
		return nil, err
	}
	return f, nil
}

// snapshotCables cables f's ports as the snapshot's nodes say, each cable
// named both ways round.
func snapshotCables(name string, nodes []snapNode, f *Fabric) error {
	for i, sn := range nodes {
		for _, sp := range sn.Ports {
			if sp.Remote == nil {
				continue
			}
			if sp.Remote.Node < 0 || sp.Remote.Node >= len(f.Nodes) {
				return fmt.Errorf("%s: nodes[%d] port %d: remote node %d out of range", name, i, sp.Num, sp.Remote.Node)
			}
			rn := f.Nodes[sp.Remote.Node]
			if sp.Remote.Port < 0 || sp.Remote.Port >= len(rn.Ports) || rn.Ports[sp.Remote.Port] == nil {
				return fmt.Errorf("%s: nodes[%d] port %d: remote %q port %d does not exist", name, i, sp.Num, rn.Desc, sp.Remote.Port)
			}
			if sp.Remote.Node == i && sp.Remote.Port == sp.Num {
				return fmt.Errorf("%s: nodes[%d] port %d is cabled to itself", name, i, sp.Num)
			}
			f.Nodes[i].Ports[sp.Num].Remote = rn.Ports[sp.Remote.Port]
		}
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Remote != p {
				return fmt.Errorf("%s: %s is cabled to %s, which is not cabled back", name, p, p.Remote)
			}
		}
	}
	return nil
}

// snapshotPorts makes n's ports from the snapshot's nodes[i] (sn), name
// naming the file in errors.
func snapshotPorts(name string, i int, sn *snapNode, n *Node) error {
	for _, sp := range sn.Ports {
		if sp.Num < 0 || sp.Num > sn.NumPorts {
			return fmt.Errorf("%s: nodes[%d] %q: port %d out of range", name, i, sn.Desc, sp.Num)
		}
		if n.Ports[sp.Num] != nil {
			return fmt.Errorf("%s: nodes[%d] %q: port %d listed twice", name, i, sn.Desc, sp.Num)
		}
		pg, err := parseHex64(sp.GUID)
		if err != nil {
			return fmt.Errorf("%s: nodes[%d] port %d: guid %q", name, i, sp.Num, sp.GUID)
		}
		if sp.Plane > MaxPlanes || sn.Planarized && (sp.Plane == 0 || sp.Num == 0) {
			return fmt.Errorf("%s: nodes[%d] port %d: plane %d (a planarized CA's ports are on planes 1 to %d, others on 0 to %d)",
				name, i, sp.Num, sp.Plane, MaxPlanes, MaxPlanes)
		}
		n.Ports[sp.Num] = &Port{Node: n, Num: sp.Num, GUID: pg, LID: sp.LID, LMC: sp.LMC,
			WidthEnabled: sp.WidthEnabled, WidthActive: sp.WidthActive, SpeedEnabled: sp.SpeedEnabled,
			SpeedActive: sp.SpeedActive, SpeedExtEnabled: sp.SpeedExtEnabled, SpeedExtActive: sp.SpeedExtActive,
			CapMask: sp.CapMask, State: sp.State, PhysState: sp.PhysState, Plane: sp.Plane}
	}
	if sn.Planarized && (n.Type != CA || sn.NumPorts < 2) {
		return fmt.Errorf("%s: nodes[%d] %q: planarized, but a %s of %d ports (a planarized CA has a port per plane, at least 2)",
			name, i, sn.Desc, n.Type, sn.NumPorts)
	}
	return nil
}

// MaxLoadSize is the largest file Load reads: 64 times the
// ibnetdiscover output of a 16,000-node fabric.
const MaxLoadSize = 1 << 30

// Load reads a topology from a file: a JSON snapshot when it starts with
// '{', else an ibsim or ibnetdiscover topology file (Parse). The file
// must be a regular file of at most MaxLoadSize bytes: a device such as
// /dev/zero, a FIFO or a huge file is refused before it is read.
func Load(path string) (*Fabric, error) { return new(Parser).Load(path) }

// Load is the package's Load with c's way of opening included files.
func (c *Parser) Load(path string) (*Fabric, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO: refused below, never waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file but %s", path, fileKind(st.Mode()))
	}
	if st.Size() > MaxLoadSize {
		return nil, fmt.Errorf("%s: %d bytes, more than a topology file holds (at most %d)", path, st.Size(), MaxLoadSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxLoadSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > MaxLoadSize {
		return nil, fmt.Errorf("%s: grew past %d bytes while being read", path, MaxLoadSize)
	}
	if strings.HasPrefix(strings.TrimSpace(string(b)), "{") {
		return ReadSnapshot(strings.NewReader(string(b)), path)
	}
	return c.Parse(path, strings.NewReader(string(b)))
}

// Rename gives the nodes a node-name-map names (ParseNameMap) those
// names as their descriptions, as infiniband-diags' tools show them in
// place of the NodeDescription everywhere they name a node. Nodes the map
// does not name keep theirs.
func (f *Fabric) Rename(names map[uint64]string) {
	if len(names) == 0 {
		return
	}
	for _, n := range f.Nodes {
		if name, ok := names[n.GUID]; ok {
			n.Desc = cleanName(name) // as a description from the wire is
		}
	}
}

// fileKind names what a file that is not regular is.
// FileKind names what a file of mode m is when it is no regular file
// ("a directory", "a named pipe", "a character device", ...), as the
// loaders' errors say it.
func FileKind(m fs.FileMode) string { return fileKind(m) }

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "of mode " + m.Type().String()
}

// nameMapBufLen is rdma-core's PARSE_NODE_MAP_BUFLEN: the C tools read
// a node name map with fgets into a buffer of this many bytes, so a
// longer line is read as several, each parsed as a line of its own.
const nameMapBufLen = 256

// ParseNameMap reads a node name map as the infiniband-diags tools read
// their --node-name-map (rdma-core's util/node_name_map.c): line by line
// (in pieces of at most 255 bytes, as fgets reads them), leading blanks
// skipped, blank lines and lines starting with '#' skipped; then the GUID
// as strtoull reads it (base 0: 0x hex, 0 octal, decimal; a sign is
// taken), which must be followed by a blank, '#' or the end of the line;
// then the name: what follows the blanks after the GUID, past any leading
// '"' and '#', up to the next '"' or '#' (so a quoted name, or the rest of
// the line, its trailing blanks included). A line with no name (a GUID
// alone, "") names nothing; of two lines with the same GUID the first
// counts. A line whose GUID does not read so is an error, and the C tools
// then use no map at all. name is for errors.
//
// Errors name the file and line but never quote it: a map given by
// mistake (or on purpose, to a command run with more rights) may be a
// file such as /etc/shadow, whose lines are secrets.
func ParseNameMap(r io.Reader, name string) (map[uint64]string, error) {
	out := map[uint64]string{}
	br := bufio.NewReader(r)
	line, cont := 1, false
	for {
		piece, err := Fgets(br, nameMapBufLen)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if piece == "" {
			break
		}
		at, isCont := line, cont // isCont: the rest of a line longer than a piece
		cont = !strings.HasSuffix(piece, "\n")
		if !cont {
			line++
		}
		if i := strings.IndexByte(piece, 0); i >= 0 {
			piece = piece[:i] // a C string ends at its first NUL
		}
		p := strings.TrimLeft(piece, cSpace)
		if p == "" || p[0] == '#' {
			continue
		}
		guid, neg, rest, ok := Strtoull(p)
		if neg {
			guid = -guid
		}
		if !ok || rest != "" && !strings.ContainsRune(cSpace+"#", rune(rest[0])) {
			if isCont {
				// rdma-core reads the line in pieces too, and fails on
				// the same piece: say why.
				return nil, fmt.Errorf("%s:%d: line longer than %d bytes (rdma-core's parser reads it in %d-byte pieces, and the rest is not a GUID and a name)", name, at, nameMapBufLen-1, nameMapBufLen-1)
			}
			return nil, fmt.Errorf("%s:%d: GUID: not a number (0x hex, decimal or 0 octal) followed by a blank or '#'", name, at)
		}
		rest = strings.TrimLeft(rest, cSpace)
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[:i]
		}
		rest = strings.TrimLeft(rest, "\"#")
		if i := strings.IndexAny(rest, "\"#"); i >= 0 {
			rest = rest[:i]
		}
		if _, dup := out[guid]; rest != "" && !dup {
			out[guid] = rest
		}
		if err == io.EOF {
			break
		}
	}
	return out, nil
}

// cSpace are the bytes C's isspace accepts.
const cSpace = " \t\n\v\f\r"

// Fgets reads what C's fgets(buf, size, f) reads: up to and including a
// newline, at most size-1 bytes (rdma-core's parsers and infiniband-diags
// read their files so, a long line in pieces).
func Fgets(br *bufio.Reader, size int) (string, error) {
	var b []byte
	for len(b) < size-1 {
		c, err := br.ReadByte()
		if err != nil {
			return string(b), err
		}
		b = append(b, c)
		if c == '\n' {
			break
		}
	}
	return string(b), nil
}

// Strtoull is C's strtoull(s, &end, 0) in parts: leading blanks
// skipped, an optional sign (neg for '-'), then 0x hex, 0 octal or
// decimal digits, as many as there are, the magnitude saturating at the
// top of uint64; rest is what follows the digits, ok false when no digit
// was read (C returns 0 with end at s). C's value is -mag when neg.
func Strtoull(s string) (mag uint64, neg bool, rest string, ok bool) {
	s = strings.TrimLeft(s, cSpace)
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && HexDigit(s[2]) >= 0:
		base, s = 16, s[2:]
	case s != "" && s[0] == '0':
		base = 8
	}
	i := 0
	for ; i < len(s); i++ {
		d := HexDigit(s[i])
		if d < 0 || uint64(d) >= base {
			break
		}
		if mag > (^uint64(0)-uint64(d))/base {
			mag = ^uint64(0)
			continue
		}
		mag = mag*base + uint64(d)
	}
	return mag, neg, s[i:], i > 0
}

// HexDigit is c's value as a hex digit, -1 when it is none.
func HexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
