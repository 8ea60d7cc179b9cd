// Package ibndcache reads and writes libibnetdisc's fabric cache file, the
// file `ibnetdiscover --cache` writes and `--load-cache`, `--diff` and
// `--filterdownports` of ibnetdiscover, iblinkinfo and ibqueryerrors read
// (rdma-core libibnetdisc/ibnetdisc_cache.c, format version 1).
//
// The file is little endian throughout:
//
//	header  28 bytes: magic 0x8FE7832B, version 1, node count, port count
//	        (32 bits each), the GUID of the node discovery started from
//	        (64 bits), the hops discovered (32 bits)
//	node    207 bytes + 9 per port key: SMA LID (16), SMA LMC (8),
//	        enhanced port 0 (8), SwitchInfo (64 bytes, as the wire has it),
//	        node GUID (64), node type (8), NumPorts (8), NodeInfo (64 bytes),
//	        NodeDescription (64 bytes), the number of port keys (8), then
//	        each key: port GUID (64) and port number (8)
//	port    95 bytes: port GUID (64), port number (8), external port
//	        number (8), base LID (16), LMC (8), PortInfo (64 bytes), the
//	        owning node's GUID (64), a remote flag (8), the remote port's
//	        GUID (64) and number (8)
//
// Decode checks the structure (lengths, counts, magic, version) and never
// allocates more than the file's length justifies; File.Fabric checks the
// references (duplicate GUIDs and ports, port numbers beyond NumPorts,
// keys and links to ports the file does not hold). Every error names the
// file and the byte offset of the record at fault.
package ibndcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/ibscript/ibscript/topo"
)

// The format's constants (ibnetdisc_cache.c).
const (
	Magic   = 0x8FE7832B
	Version = 1

	HeaderLen  = 28
	NodeLen    = 15 + 3*64 // a node record without its port keys
	PortKeyLen = 9
	PortLen    = 31 + 64
)

// MaxFileSize bounds what Read reads: a cache of 100,000 nodes with 40
// ports each is under 400 MiB.
const MaxFileSize = 1 << 30

// ErrFormat is wrapped by every error about a file's content.
var ErrFormat = errors.New("invalid ibnetdiscover cache")

// File is a cache file's records, in file order.
type File struct {
	// FromNode is the GUID of the node discovery started from.
	FromNode uint64
	// MaxHops is libibnetdisc's maxhops_discovered.
	MaxHops uint32
	Nodes   []Node
	Ports   []Port
}

// Node is a node record.
type Node struct {
	SMALID     uint16 // port 0's LID on a switch
	SMALMC     uint8
	SMAEnhSP0  uint8    // SwitchInfo.EnhancedPort0 (switches)
	SwitchInfo [64]byte // zero on CAs and routers
	GUID       uint64
	Type       uint8
	NumPorts   uint8
	Info       [64]byte // NodeInfo
	Desc       [64]byte // NodeDescription
	Ports      []PortKey
}

// PortKey names a port: its GUID (a switch's ports share one) and number.
type PortKey struct {
	GUID uint64
	Num  uint8
}

// Port is a port record.
type Port struct {
	GUID      uint64
	Num       uint8
	ExtNum    uint8
	BaseLID   uint16 // a switch's ports carry the switch's LID
	LMC       uint8
	Info      [64]byte // PortInfo
	NodeGUID  uint64
	HasRemote bool
	Remote    PortKey // zero without a remote
}

// Read reads and decodes the cache file name.
func Read(name string) (*File, error) {
	f, err := topo.OpenFile(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", name, st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxFileSize {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", name, ErrFormat, MaxFileSize)
	}
	return Decode(name, b)
}

type decoder struct {
	name string
	b    []byte
	off  int
}

func (d *decoder) errorf(off int, format string, args ...any) error {
	return fmt.Errorf("%s: offset %d: %w: %s", d.name, off, ErrFormat, fmt.Sprintf(format, args...))
}

func (d *decoder) u8() uint8 {
	v := d.b[d.off]
	d.off++
	return v
}

func (d *decoder) u16() uint16 {
	v := binary.LittleEndian.Uint16(d.b[d.off:])
	d.off += 2
	return v
}

func (d *decoder) u32() uint32 {
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

func (d *decoder) u64() uint64 {
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

func (d *decoder) block(dst *[64]byte) {
	copy(dst[:], d.b[d.off:d.off+64])
	d.off += 64
}

// need fails when fewer than n bytes are left for what.
func (d *decoder) need(n int, what string) error {
	if len(d.b)-d.off < n {
		return d.errorf(d.off, "truncated: %s needs %d bytes, %d left", what, n, len(d.b)-d.off)
	}
	return nil
}

// Decode decodes a cache file's bytes; name is the file's name for errors.
// It checks the structure only: File.Fabric checks the references.
func Decode(name string, b []byte) (*File, error) {
	d := &decoder{name: name, b: b}
	if err := d.need(HeaderLen, "the header"); err != nil {
		return nil, err
	}
	if m := d.u32(); m != Magic {
		return nil, d.errorf(0, "magic 0x%08x, want 0x%08x", m, uint32(Magic))
	}
	if v := d.u32(); v != Version {
		return nil, d.errorf(4, "version %d, want %d", v, Version)
	}
	nodes, ports := d.u32(), d.u32()
	f := &File{FromNode: d.u64(), MaxHops: d.u32()}
	// The counts are checked against the bytes left before anything is
	// allocated for them: every node record takes NodeLen bytes at
	// least, every port record PortLen.
	left := uint64(len(b) - HeaderLen)
	if uint64(nodes)*NodeLen+uint64(ports)*PortLen > left {
		return nil, d.errorf(8, "%d nodes and %d ports need %d bytes at least, the file has %d after the header",
			nodes, ports, uint64(nodes)*NodeLen+uint64(ports)*PortLen, left)
	}
	f.Nodes = make([]Node, nodes)
	for i := range f.Nodes {
		n := &f.Nodes[i]
		at := d.off
		if err := d.need(NodeLen, fmt.Sprintf("node record %d", i)); err != nil {
			return nil, err
		}
		n.SMALID, n.SMALMC, n.SMAEnhSP0 = d.u16(), d.u8(), d.u8()
		d.block(&n.SwitchInfo)
		n.GUID, n.Type, n.NumPorts = d.u64(), d.u8(), d.u8()
		d.block(&n.Info)
		d.block(&n.Desc)
		k := int(d.u8())
		if err := d.need(k*PortKeyLen, fmt.Sprintf("node record %d (at offset %d, GUID 0x%016x): %d port keys", i, at, n.GUID, k)); err != nil {
			return nil, err
		}
		n.Ports = make([]PortKey, k)
		for j := range n.Ports {
			n.Ports[j] = PortKey{GUID: d.u64(), Num: d.u8()}
		}
	}
	if err := d.need(int(ports)*PortLen, fmt.Sprintf("%d port records", ports)); err != nil {
		return nil, err
	}
	f.Ports = make([]Port, ports)
	for i := range f.Ports {
		p := &f.Ports[i]
		p.GUID, p.Num, p.ExtNum, p.BaseLID, p.LMC = d.u64(), d.u8(), d.u8(), d.u16(), d.u8()
		d.block(&p.Info)
		p.NodeGUID = d.u64()
		flag := d.u8()
		p.Remote = PortKey{GUID: d.u64(), Num: d.u8()}
		p.HasRemote = flag != 0
	}
	if d.off != len(b) {
		return nil, d.errorf(d.off, "%d bytes after the last port record", len(b)-d.off)
	}
	return f, nil
}

// NodeOffset and PortOffset return where record i starts in the encoded
// file, for errors about references.
func (f *File) NodeOffset(i int) int {
	off := HeaderLen
	for _, n := range f.Nodes[:i] {
		off += NodeLen + PortKeyLen*len(n.Ports)
	}
	return off
}

// PortOffset returns where port record i starts in the encoded file.
func (f *File) PortOffset(i int) int {
	return f.NodeOffset(len(f.Nodes)) + PortLen*i
}

// Encode returns the file's bytes. A node holds at most 255 port keys
// (the count is one byte): more is an error.
func (f *File) Encode() ([]byte, error) {
	size := HeaderLen + PortLen*len(f.Ports)
	for _, n := range f.Nodes {
		if len(n.Ports) > 255 {
			return nil, fmt.Errorf("ibndcache: node 0x%016x has %d port keys, at most 255 fit", n.GUID, len(n.Ports))
		}
		size += NodeLen + PortKeyLen*len(n.Ports)
	}
	b := make([]byte, 0, size)
	le := binary.LittleEndian
	b = le.AppendUint32(b, Magic)
	b = le.AppendUint32(b, Version)
	b = le.AppendUint32(b, uint32(len(f.Nodes)))
	b = le.AppendUint32(b, uint32(len(f.Ports)))
	b = le.AppendUint64(b, f.FromNode)
	b = le.AppendUint32(b, f.MaxHops)
	for _, n := range f.Nodes {
		b = le.AppendUint16(b, n.SMALID)
		b = append(b, n.SMALMC, n.SMAEnhSP0)
		b = append(b, n.SwitchInfo[:]...)
		b = le.AppendUint64(b, n.GUID)
		b = append(b, n.Type, n.NumPorts)
		b = append(b, n.Info[:]...)
		b = append(b, n.Desc[:]...)
		b = append(b, uint8(len(n.Ports)))
		for _, k := range n.Ports {
			b = le.AppendUint64(b, k.GUID)
			b = append(b, k.Num)
		}
	}
	for _, p := range f.Ports {
		b = le.AppendUint64(b, p.GUID)
		b = append(b, p.Num, p.ExtNum)
		b = le.AppendUint16(b, p.BaseLID)
		b = append(b, p.LMC)
		b = append(b, p.Info[:]...)
		b = le.AppendUint64(b, p.NodeGUID)
		flag := uint8(0)
		if p.HasRemote {
			flag = 1
		}
		b = append(b, flag)
		b = le.AppendUint64(b, p.Remote.GUID)
		b = append(b, p.Remote.Num)
	}
	return b, nil
}

// Write writes the file to name as ibnd_cache_fabric does: an existing
// file is replaced, the new one created with mode 0644. A file that
// cannot be written in full is removed.
func (f *File) Write(name string) error {
	b, err := f.Encode()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	// ibnd_cache_fabric unlink(2)s the old file: a directory is refused
	// (EISDIR), never removed, where os.Remove would rmdir an empty one.
	// So is a device, a FIFO or a socket, which C would unlink: as root
	// `--cache /dev/null` put a regular file in /dev/null's place.
	if fi, err := os.Lstat(name); err == nil && fi.IsDir() {
		return fmt.Errorf("error removing '%s': %w", name, syscall.EISDIR)
	} else if err == nil && !fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0 {
		return fmt.Errorf("error removing '%s': not a regular file but %s (ibscript replaces only a file or a link)", name, topo.FileKind(fi.Mode()))
	}
	if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("error removing '%s': %w", name, err)
	}
	out, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
