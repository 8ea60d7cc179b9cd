package topo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"net/netip"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// File-format limits, as ibsim 0.10 applies them.
const (
	// MaxLineLen is the longest line a topology file may hold (ibsim reads
	// lines into a 256-byte buffer).
	MaxLineLen = 255
	// MaxIncludeDepth is how deeply include directives may nest.
	MaxIncludeDepth = 9
	maxNodeIDLen    = 64 // ibsim NODEIDLEN - 1
	maxPrefixLen    = 20 // ibsim NODEPREFIX
	maxDescLen      = 64 // NodeDescription
	maxUnicastLID   = 0xbfff
)

// Bounds on what one topology may describe, beyond ibsim's: a file costs
// memory and time in proportion to what it describes, and an absurd one
// is an error at the line that passes a bound, before it is built.
const (
	// MaxNodePorts is the most ports a node may have: IBA numbers a
	// switch's external ports 1..254 (255 is reserved), beside port 0.
	MaxNodePorts = 254
	// MaxNodes is the most nodes a topology may hold: a subnet has
	// 0xBFFF unicast LIDs, and every switch and CA needs one.
	MaxNodes = maxUnicastLID
	// MaxPorts is the most ports (every node's, port 0 included) a
	// topology may declare: 4.6 times a 16k-node fat tree's (57k); at
	// the bound, unlinked 254-port switches cost about 100 MB in the
	// simulator and 800 MB as fabric.load's Lua tables.
	MaxPorts = 1 << 18
)

// Default GUID bases and link masks of ibsim.
const (
	DefaultCAGUID     = 0x100000
	DefaultSwitchGUID = 0x200000
	DefaultRouterGUID = 0
	defaultWidth      = 2 // 4x
	defaultSpeed      = 1 // SDR
)

// ParseError is returned for a topology file that cannot be loaded. It names
// the file and line.
type ParseError struct {
	File string
	Line int
	Msg  string
	Err  error // underlying error (e.g. of an include), or nil
}

func (e *ParseError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Msg, e.Err)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Parse reads a topology in ibsim's "net" format, which is also
// ibnetdiscover's default output, from r. name is used in error messages
// and to resolve include directives (relative to name's directory, in the
// OS file system).
//
// GUIDs follow ibsim's rules: switches take one GUID each from 0x200000
// (node GUID = port GUID of every port), CAs and routers take NumPorts+1
// GUIDs each, from 0x100000 and 0 (port p's GUID = node GUID + p), unless
// switchguid=, caguid=/hcaguids= or rtguid= lines move the counters.
// ibnetdiscover's "(portguid)" annotations are accepted and ignored, as
// ibsim does. A comment line `# ipoib "node"[port] IP...` gives that CA or
// router port the IP addresses of its IPoIB interface (Port.IPoIB), which
// the simulator's RDMA CM resolves; ibsim sees a comment. A comment line
// `# planarized "node" 1 2 3 4` makes that CA planarized, its port p on
// the p-th plane listed (Node.Planarized, Port.Plane; planes.go); ibsim
// sees a comment and loads the CA as an ordinary multi-port one.
//
// Unlike ibsim, every inconsistency is an error naming file:line: links not
// written the same way at both ends, duplicate node ids or GUIDs, port
// numbers out of range, unknown remote nodes, link ends with no common
// enabled width or speed, bad numbers, lines longer than MaxLineLen, lines
// that would end a node record and be silently dropped. The returned error
// is a *ParseError; on error the fabric is nil.
func Parse(name string, r io.Reader) (*Fabric, error) {
	var p Parser
	return p.Parse(name, r)
}

// ParseFile reads a topology file; see Parse.
func ParseFile(path string) (*Fabric, error) {
	var p Parser
	return p.ParseFile(path)
}

// Parser reads topology files with options. The zero value reads from the
// OS file system and discards notes.
type Parser struct {
	// FS, when set, is where ParseFile and include directives find files
	// (paths are slash-separated, relative to the FS root). nil means the
	// OS file system.
	FS fs.FS
	// Open, when set (and FS is not), opens the files include
	// directives name (OS paths): the host's check of which files may
	// be read. nil means os.Open.
	Open func(name string) (io.ReadCloser, error)
	// Logger receives notes about lines that are accepted but have no
	// effect here, such as ibsim console commands ("do ..."). nil discards.
	Logger *slog.Logger
	// Context, when set, ends the parse when it is done (Ctrl-C, SIGTERM,
	// --time-limit): the error wraps its cause. nil never ends it.
	Context context.Context
}

// ParseFile reads the topology file at name; see Parse.
func (c *Parser) ParseFile(name string) (*Fabric, error) {
	rc, err := c.open(name)
	if err != nil {
		return nil, &ParseError{File: name, Msg: "open", Err: err}
	}
	defer rc.Close()
	return c.Parse(name, rc)
}

// Parse reads a topology from r; see the package-level Parse.
func (c *Parser) Parse(name string, r io.Reader) (*Fabric, error) {
	p := &parser{
		cfg:      c,
		f:        &Fabric{},
		ids:      make(map[string]nodeEntry),
		width:    defaultWidth,
		speed:    defaultSpeed,
		guidBase: [4]uint64{CA: DefaultCAGUID, Switch: DefaultSwitchGUID, Router: DefaultRouterGUID},
	}
	p.guidNext = p.guidBase
	if err := p.file(name, r, 0); err != nil {
		return nil, err
	}
	if len(p.f.Nodes) == 0 {
		// FooBar=1 or /etc/passwd: not a topology, never an empty fabric
		// (the line is not quoted: the file may be a secret one).
		e := &ParseError{File: name, Msg: "not a topology: no node record (a Switch, Hca, Ca or Rt line of an ibsim or ibnetdiscover topology)"}
		if p.ignored.file != "" {
			e.File, e.Line = p.ignored.file, p.ignored.line
			e.Msg = "not a topology line, and the file has no node record (a Switch, Hca, Ca or Rt line of an ibsim or ibnetdiscover topology)"
		}
		return nil, e
	}
	if err := p.connect(); err != nil {
		return nil, err
	}
	if err := p.applyPlanes(); err != nil {
		return nil, err
	}
	for _, l := range p.ipoib {
		n := p.ids[l.node].node
		if n == nil || n.Type == Switch || l.port < 1 || l.port >= len(n.Ports) || n.Ports[l.port] == nil {
			return nil, &ParseError{File: l.at.file, Line: l.at.line,
				Msg: fmt.Sprintf("ipoib: no CA or router port %q[%d]", l.node, l.port)}
		}
		n.Ports[l.port].IPoIB = append(n.Ports[l.port].IPoIB, l.ips...)
	}
	return p.f, nil
}

// ipoibDirective reads `# ipoib "NODE"[PORT] IP...`: the IPoIB addresses of
// a CA or router port (ibscript's; a comment to ibsim).
func (p *parser) ipoibDirective(lr *lineReader, line string) error {
	rest := strings.TrimSpace(strings.TrimPrefix(line, "# ipoib "))
	bad := func(why string) error {
		return lr.errorf("ipoib %q: %s (want: # ipoib \"node\"[port] 10.0.0.1 fd00::1)", rest, why)
	}
	node, rest, why := directiveNode(rest)
	if why != "" {
		return bad(why)
	}
	if !strings.HasPrefix(rest, "[") || !strings.Contains(rest, "]") {
		return bad("no [port]")
	}
	j := strings.IndexByte(rest, ']')
	port, err := strconv.Atoi(rest[1:j])
	if err != nil {
		return bad("port is not a number")
	}
	l := ipoibLine{at: lr.pos(), node: node, port: port}
	for _, f := range strings.Fields(rest[j+1:]) {
		ip, err := netip.ParseAddr(f)
		if err != nil || ip.Zone() != "" || ip.IsUnspecified() || ip.Is4In6() {
			return bad(fmt.Sprintf("%q is not an IPv4 or IPv6 address", f))
		}
		l.ips = append(l.ips, ip)
	}
	if len(l.ips) == 0 {
		return bad("no address")
	}
	p.ipoib = append(p.ipoib, l)
	return nil
}

// directiveNode reads the quoted node id that starts a directive's text
// (after "# ipoib ", "# planarized "), returning the text after it, or why
// there is none.
func directiveNode(s string) (node, rest, why string) {
	if !strings.HasPrefix(s, "\"") {
		return "", "", "no quoted node id"
	}
	end := strings.IndexByte(s[1:], '"')
	if end < 0 {
		return "", "", "unterminated node id"
	}
	return s[1 : 1+end], s[2+end:], ""
}

func (c *Parser) open(name string) (io.ReadCloser, error) {
	if c.FS != nil {
		return c.FS.Open(name)
	}
	if c.Open != nil {
		return c.Open(name)
	}
	return OpenFile(name)
}

// includePath resolves an include directive's file name against the file
// that contains it.
func (c *Parser) includePath(from, name string) string {
	if c.FS != nil {
		if path.IsAbs(name) {
			return path.Clean(name[1:])
		}
		return path.Join(path.Dir(from), name)
	}
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(filepath.Dir(from), name)
}

type pos struct {
	file string
	line int
}

func (p pos) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

type guidOwner struct {
	node *Node
	port int // -1: the node GUID
}

func (o guidOwner) String() string {
	if o.port < 0 {
		return fmt.Sprintf("node GUID of %q", o.node.ID)
	}
	return fmt.Sprintf("port %d GUID of %q", o.port, o.node.ID)
}

// cable is one port line: the local end and where it says it goes.
type cable struct {
	from       *Port
	remoteID   string
	remotePort int
	at         pos
}

// cableList holds a file's cables in fixed-size chunks: appending to one
// slice copied it over and over as it grew, a sixth of a planarized
// 2,000-node tree's parse (23,552 cables).
type cableList struct {
	chunks [][]cable
	n      int32
}

const cableChunk = 1024

// add appends c and returns its index.
func (l *cableList) add(c cable) int32 {
	if int(l.n)%cableChunk == 0 {
		l.chunks = append(l.chunks, make([]cable, 0, cableChunk))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, c)
	l.n++
	return l.n - 1
}

// at returns the cable at index i.
func (l *cableList) at(i int32) *cable { return &l.chunks[i/cableChunk][i%cableChunk] }

// slab hands out slices of T from chunks that grow to 1,024: a node's
// Node, Ports and port pointers were three allocations (a fifth of a
// planarized 2,000-node tree's parse). A slice taken has no room past its
// length, so appending to it copies.
type slab[T any] struct {
	free []T
	next int // the next chunk's size
}

func (s *slab[T]) take(n int) []T {
	if len(s.free) < n {
		s.next = min(max(2*s.next, 16), 1024)
		s.free = make([]T, max(n, s.next))
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	return out
}

// nodeEntry is a node the parser has read, by id.
type nodeEntry struct {
	node *Node
	// cableOf is, by port number, the index of the port's cable
	// (cables), -1 for none: one slice a node, not a map entry a port
	// (a tenth of a big file's parse went to the two maps it replaces),
	// found with the node (connect looks up every cable's remote end).
	cableOf []int32
	at      pos // its header line
}

type parser struct {
	cfg      *Parser
	f        *Fabric
	ids      map[string]nodeEntry
	guids    []guidRange // claimed, sorted and disjoint (claimGUIDs)
	cables   cableList
	guidBase [4]uint64 // absolute bases by NodeType
	guidNext [4]uint64 // next GUID by NodeType
	guidWrap [4]bool   // guidNext wrapped past 2^64-1 (an error when used)
	vendID   uint32    // next node only
	sysGUID  uint64    // next node only
	devID    uint16
	width    uint8
	speed    uint8
	extSpeed uint8
	prefix   string
	ignored  pos // the first line that was not a topology line
	ipoib    []ipoibLine
	// planarized are the "# planarized" lines (planes.go).
	planarized []planarizedLine
	nports     int // ports declared so far (MaxPorts)
	nodeSlab   slab[Node]
	portSlab   slab[Port]
	ptrSlab    slab[*Port]
}

// ipoibLine is a "# ipoib" line, applied once every node is known.
type ipoibLine struct {
	at   pos
	node string
	port int
	ips  []netip.Addr
}

// lineReader yields the lines of one file with their numbers.
type lineReader struct {
	r    io.Reader
	buf  []byte // what was read and not yet in text: the start of a line
	n    int    // bytes in buf
	rerr error  // the reader's error (io.EOF at the end), met after text
	// text is the complete lines read so far and not yet yielded from
	// off: one string a buffer of lines, not one a line (those were
	// half of a planarized 2,000-node tree's allocations). A line is a
	// substring of it, so what a parse keeps of a line pins its chunk:
	// newNode copies the ids and descriptions it keeps.
	text string
	off  int
	file string
	line int
	err  error
	ctx  context.Context // nil, or ends the read (looked at every 1024 lines)
}

// lineBufSize is how much a lineReader reads at a time: 64 KiB, not 1
// KiB (a read(2) a kilobyte was a thirtieth of a planarized 2,000-node
// tree's load). A line that does not fit is an error.
const lineBufSize = 64 << 10

func newLineReader(file string, r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, lineBufSize), file: file}
}

// next returns the next line without its end-of-line characters; ok is
// false at the end of the file or on an error (in lr.err).
func (lr *lineReader) next() (line string, ok bool) {
	if lr.err != nil {
		return "", false
	}
	if lr.ctx != nil && lr.line%1024 == 1023 {
		if err := context.Cause(lr.ctx); err != nil {
			lr.err = &ParseError{File: lr.file, Line: lr.line + 1, Msg: "parse stopped", Err: err}
			return "", false
		}
	}
	if lr.off >= len(lr.text) && !lr.fill() {
		return "", false
	}
	rest := lr.text[lr.off:]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		line = rest[:i]
		lr.off += i + 1
	} else { // the last line, without an end of line
		line = rest
		lr.off = len(lr.text)
	}
	lr.line++
	line = strings.TrimSuffix(line, "\r")
	if len(line) > MaxLineLen {
		lr.err = lr.errorf("line too long (%d > %d characters)", len(line), MaxLineLen)
		return "", false
	}
	return line, true
}

// fill reads until lr.text holds at least one more line (it ends at the
// last end of line read, or at the end of the file), reporting false at
// the end of the file or on an error (in lr.err). It reads as bufio does:
// what one read returns, more only while no line is complete.
func (lr *lineReader) fill() bool {
	for empty := 0; lr.rerr == nil && lr.n < len(lr.buf); {
		m, err := lr.r.Read(lr.buf[lr.n:])
		lr.n += m
		lr.rerr = err
		switch {
		case m > 0 && bytes.IndexByte(lr.buf[lr.n-m:lr.n], '\n') >= 0:
			return lr.cut()
		case m > 0:
			empty = 0
		case err == nil:
			if empty++; empty == 100 {
				lr.rerr = io.ErrNoProgress
			}
		}
	}
	return lr.cut()
}

// cut moves the complete lines of lr.buf to lr.text (fill).
func (lr *lineReader) cut() bool {
	end := bytes.LastIndexByte(lr.buf[:lr.n], '\n') + 1
	switch {
	case end > 0:
	case lr.n == len(lr.buf):
		lr.line++
		lr.err = lr.errorf("line too long (more than %d characters)", MaxLineLen)
		return false
	case lr.rerr == io.EOF && lr.n > 0:
		end = lr.n // the last line, without an end of line
	case lr.rerr == io.EOF:
		return false
	case lr.rerr != nil:
		lr.err = &ParseError{File: lr.file, Line: lr.line + 1, Msg: "read", Err: lr.rerr}
		return false
	}
	lr.text, lr.off = string(lr.buf[:end]), 0
	lr.n = copy(lr.buf, lr.buf[end:lr.n])
	return true
}

func (lr *lineReader) errorf(format string, args ...any) *ParseError {
	return &ParseError{File: lr.file, Line: lr.line, Msg: fmt.Sprintf(format, args...)}
}

func (lr *lineReader) pos() pos { return pos{lr.file, lr.line} }

// file parses one file (the top one or an include).
func (p *parser) file(name string, r io.Reader, depth int) error {
	lr := newLineReader(name, r)
	lr.ctx = p.cfg.Context
	for {
		line, ok := lr.next()
		if !ok {
			return lr.err
		}
		if err := p.topLine(lr, line, depth); err != nil {
			return err
		}
	}
}

// topLine handles one line outside node records. Global directives are
// matched by prefix at the start of the line, as ibsim does.
func (p *parser) topLine(lr *lineReader, line string, depth int) error {
	has := func(prefix string) bool { return strings.HasPrefix(line, prefix) }
	switch {
	case has("# ipoib "):
		return p.ipoibDirective(lr, line)
	case has("# planarized "):
		return p.planarizedDirective(lr, line)
	case has("Switch"):
		return p.node(lr, line, Switch, len("Switch"))
	case has("Hca"):
		return p.node(lr, line, CA, len("Hca"))
	case has("Ca"):
		return p.node(lr, line, CA, len("Ca"))
	case has("Rt"):
		return p.node(lr, line, Router, len("Rt"))
	case has("switchguid"):
		return p.guidLine(lr, line, Switch)
	case has("hcaguids"), has("caguid"):
		return p.guidLine(lr, line, CA)
	case has("rtguid"):
		return p.guidLine(lr, line, Router)
	case has("vendid"):
		v, err := p.assignment(lr, line, 24)
		p.vendID = uint32(v)
		return err
	case has("devid"):
		v, err := p.assignment(lr, line, 16)
		p.devID = uint16(v)
		return err
	case has("sysimgguid"):
		v, err := p.assignment(lr, line, 64)
		p.sysGUID = v
		return err
	case has("width"):
		v, err := p.assignment(lr, line, 8)
		if err == nil {
			err = checkMask(lr, "width", v, 1, 31)
		}
		p.width = uint8(v)
		return err
	case has("speed"):
		v, err := p.assignment(lr, line, 8)
		if err == nil {
			err = checkMask(lr, "speed", v, 1, 7)
		}
		p.speed = uint8(v)
		return err
	case has("extspeed"):
		v, err := p.assignment(lr, line, 8)
		if err == nil {
			err = checkMask(lr, "extspeed", v, 0, 0x2f) // 32: XDR (see Port)
		}
		p.extSpeed = uint8(v)
		return err
	case has("module"):
		return p.module(lr, line)
	case has("include"):
		return p.include(lr, line, depth)
	case has("pdebug"):
		return nil
	case has("do"):
		if l := p.cfg.Logger; l != nil {
			l.Info("topology: ibsim console command ignored", "at", lr.pos().String(), "line", line)
		}
		return nil
	case has("[") || has("@"):
		return lr.errorf("port line outside a node record (more port lines than the header's port count?)")
	}
	if t := strings.TrimLeft(line, " \t\r\v\f"); t != "" && t[0] != '#' && p.ignored.file == "" {
		p.ignored = lr.pos() // named if the file turns out to hold no node
	}
	return nil // anything else is ignored, as by ibsim
}

func checkMask(lr *lineReader, what string, v uint64, lo, hi uint64) error {
	if v < lo || v > hi {
		return lr.errorf("bad %s %d (want %d..%d)", what, v, lo, hi)
	}
	return nil
}

// assignment parses "name=value" with a C-style number (decimal, 0x hex,
// 0 octal); a trailing "(...)" annotation, as ibnetdiscover writes after
// GUIDs, and trailing blanks are allowed.
func (p *parser) assignment(lr *lineReader, line string, bits int) (uint64, error) {
	i := strings.IndexByte(line, '=')
	if i < 0 {
		return 0, lr.errorf("bad assignment %q: missing '='", line)
	}
	return parseValue(lr, line[:i], line[i+1:], bits)
}

func parseValue(lr *lineReader, what, s string, bits int) (uint64, error) {
	s = strings.TrimSpace(s)
	if j := strings.IndexByte(s, '('); j >= 0 && strings.HasSuffix(s, ")") {
		s = strings.TrimSpace(s[:j])
	}
	v, err := parseNum(s, bits)
	if err != nil {
		return 0, lr.errorf("bad number %q for %s", s, strings.TrimSpace(what))
	}
	return v, nil
}

// parseNum parses a number as C's strtoul with base 0 does.
func parseNum(s string, bits int) (uint64, error) {
	// A short decimal without a leading 0 (a port count, a LID: most
	// numbers of a file) is read here; the rest as strconv reads them.
	if len(s) > 0 && len(s) <= 9 && s[0] != '0' {
		v := uint64(0)
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				v = 1 << 63 // not decimal: strconv's
				break
			}
			v = v*10 + uint64(s[i]-'0')
		}
		if v < 1<<bits {
			return v, nil
		}
	} else if s == "0" {
		return 0, nil
	}
	if s == "" || strings.ContainsRune(s, '_') {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseUint(s, 0, bits)
}

// guidKeyword names the line that sets each node type's GUID base.
var guidKeyword = [4]string{CA: "caguid=", Switch: "switchguid=", Router: "rtguid="}

// guidLine handles switchguid=G, caguid=G, rtguid=G (absolute) and the
// relative form without '=': "caguid+G" (ibsim: a '+' is only looked for
// when the line has no '=').
func (p *parser) guidLine(lr *lineReader, line string, t NodeType) error {
	relative := false
	i := strings.IndexByte(line, '=')
	if i < 0 {
		if i = strings.IndexByte(line, '+'); i < 0 {
			return lr.errorf("bad assignment %q: missing '=' or '+'", line)
		}
		relative = true
	}
	v, err := parseValue(lr, line[:i], line[i+1:], 64)
	if err != nil {
		return err
	}
	if !relative {
		p.guidBase[t] = v
		v = 0
	}
	if p.guidBase[t]+v < p.guidBase[t] {
		return lr.errorf("%s: GUID 0x%x + 0x%x wraps past 0xffffffffffffffff", strings.TrimSpace(line[:i]), p.guidBase[t], v)
	}
	p.guidNext[t] = p.guidBase[t] + v
	p.guidWrap[t] = false
	return nil
}

func (p *parser) module(lr *lineReader, line string) error {
	i := strings.IndexByte(line, '=')
	if i < 0 {
		return lr.errorf("bad assignment %q: missing '='", line)
	}
	s, _, ok := quoted(line[i+1:])
	if !ok {
		return lr.errorf("module: missing quoted prefix")
	}
	if len(s) > maxPrefixLen {
		return lr.errorf("module prefix %q too long (max %d)", s, maxPrefixLen)
	}
	if strings.ContainsAny(s, "#@") {
		return lr.errorf("module prefix %q: '#' and '@' are reserved", s)
	}
	p.prefix = s
	return nil
}

func (p *parser) include(lr *lineReader, line string, depth int) error {
	name, _, ok := quoted(line)
	if !ok || name == "" {
		return lr.errorf("include: missing quoted file name")
	}
	if depth+1 > MaxIncludeDepth {
		return lr.errorf("include %q: nested more than %d deep", name, MaxIncludeDepth)
	}
	full := p.cfg.includePath(lr.file, name)
	rc, err := p.cfg.open(full)
	if err != nil {
		return &ParseError{File: lr.file, Line: lr.line, Msg: fmt.Sprintf("include %q", name), Err: err}
	}
	defer rc.Close()
	return p.file(full, rc, depth+1)
}

// quoted returns the text between the first pair of double quotes in s and
// what follows the closing quote.
func quoted(s string) (text, rest string, ok bool) {
	i := strings.IndexByte(s, '"')
	if i < 0 {
		return "", s, false
	}
	j := strings.IndexByte(s[i+1:], '"')
	if j < 0 {
		return "", s, false
	}
	return s[i+1 : i+1+j], s[i+2+j:], true
}

func (p *parser) fullID(id string) string {
	if p.prefix == "" {
		return id
	}
	return p.prefix + "#" + id
}

// node parses a node record: the header line and its port lines.
func (p *parser) node(lr *lineReader, line string, t NodeType, kwLen int) error {
	at := lr.pos()
	n, rest, err := p.nodePorts(lr, line, kwLen)
	if err != nil {
		return err
	}
	id, tail, err := p.nodeID(lr, rest)
	if err != nil {
		return err
	}
	desc, attrs := nodeDesc(tail)
	if desc == "" {
		desc = id
	}
	if len(desc) > maxDescLen {
		// NodeDescription holds 64 bytes: cut to them, and say so.
		// (ibsim keeps 63, new_node's strncpy into its 64-byte nodedesc
		// leaving a NUL; the embedded simulator answers 63 as it does.)
		p.note(lr, fmt.Sprintf("description of %q longer than %d bytes cut to its first %d (ibsim keeps %d)", id, maxDescLen, maxDescLen, maxDescLen-1), desc)
		desc = desc[:maxDescLen]
	}

	span := n // a CA's or router's port GUIDs follow its node GUID
	if t == Switch {
		span = 0
	}
	if g := p.guidNext[t]; p.guidWrap[t] || g+span < g {
		return lr.errorf("%q: GUIDs from 0x%x for %d ports wrap past 0xffffffffffffffff (set a lower base with %s)", id, g, n, guidKeyword[t])
	}
	nd := p.newNode(t, id, desc, n, span)
	if err := p.claimGUIDs(lr, nd); err != nil {
		return err
	}
	if t == Switch && attrs != "" {
		if strings.Contains(attrs, "enhanced port 0") {
			nd.EnhancedPort0 = true
		}
		if err := lidLMC(lr, attrs, nd.Ports[0]); err != nil {
			return err
		}
	}
	cableOf := make([]int32, nd.NumPorts+1)
	for i := range cableOf {
		cableOf[i] = -1
	}
	p.ids[nd.ID] = nodeEntry{nd, cableOf, at}
	p.f.Nodes = append(p.f.Nodes, nd)
	return p.ports(lr, nd, cableOf)
}

// nodePorts reads the port count of a node header (after its keyword of
// kwLen bytes), counting it against the fabric's limits, and returns the
// rest of the line.
func (p *parser) nodePorts(lr *lineReader, line string, kwLen int) (uint64, string, error) {
	rest := line[kwLen:]
	if rest == "" || !isSpace(rest[0]) {
		return 0, "", lr.errorf("bad node header %q", line)
	}
	rest = trimBlanks(rest)
	end := strings.IndexAny(rest, " \t\"")
	if end < 0 {
		end = len(rest)
	}
	n, err := parseNum(rest[:end], 16)
	if err != nil {
		return 0, "", lr.errorf("bad port count %q", rest[:end])
	}
	if n < 1 || n > MaxNodePorts {
		return 0, "", lr.errorf("port count %d out of range (1-%d: IBA numbers ports up to 254, 255 is reserved)", n, MaxNodePorts)
	}
	if len(p.f.Nodes) >= MaxNodes {
		return 0, "", lr.errorf("more than %d nodes (a subnet has %d unicast LIDs)", MaxNodes, maxUnicastLID)
	}
	if p.nports += int(n) + 1; p.nports > MaxPorts {
		return 0, "", lr.errorf("more than %d ports in all (topo.MaxPorts; %d nodes so far)", MaxPorts, len(p.f.Nodes))
	}
	return n, rest[end:], nil
}

// nodeID reads the quoted node id that follows the port count, refusing
// an empty, reserved, too long or duplicate one, and returns the rest of
// the line.
func (p *parser) nodeID(lr *lineReader, rest string) (id, tail string, err error) {
	if s := trimBlanks(rest); s == "" || s[0] != '"' {
		return "", "", lr.errorf("missing quoted node id")
	}
	id, tail, ok := quoted(rest)
	if !ok {
		return "", "", lr.errorf("missing closing quote of node id")
	}
	if id == "" {
		return "", "", lr.errorf("empty node id")
	}
	if strings.ContainsAny(id, "#@") {
		return "", "", lr.errorf("bad node id %q: '#' and '@' are reserved", id)
	}
	id = p.fullID(id)
	if len(id) > maxNodeIDLen {
		return "", "", lr.errorf("node id %q too long (max %d)", id, maxNodeIDLen)
	}
	if old, dup := p.ids[id]; dup {
		return "", "", lr.errorf("duplicate node id %q (first at %s)", id, old.at)
	}
	return id, tail, nil
}

// newNode makes node id of type t with n ports, its GUIDs the next of
// its type (span more for a CA's or router's port GUIDs), and clears the
// per-node keywords.
func (p *parser) newNode(t NodeType, id, desc string, n, span uint64) *Node {
	nd := &p.nodeSlab.take(1)[0]
	*nd = Node{
		ID:       strings.Clone(id), // not the file's text it is part of (lineReader)
		Desc:     desc,
		Type:     t,
		NumPorts: int(n),
		GUID:     p.guidNext[t],
		VendorID: p.vendID,
		DeviceID: p.devID,
	}
	if desc == id {
		nd.Desc = nd.ID
	} else {
		nd.Desc = strings.Clone(desc)
	}
	nd.SysGUID = nd.GUID
	if p.sysGUID != 0 {
		nd.SysGUID = p.sysGUID
	}
	next := p.guidNext[t] + span + 1
	p.guidWrap[t] = next <= p.guidNext[t]
	p.guidNext[t] = next
	p.vendID, p.sysGUID = 0, 0

	first := uint64(0) // a CA or router has no port 0
	if t != Switch {
		first = 1
	}
	ports := p.portSlab.take(int(n + 1 - first))
	nd.Ports = p.ptrSlab.take(int(n + 1))
	for i := int(first); i <= int(n); i++ {
		pt := &ports[i-int(first)]
		*pt = Port{Node: nd, Num: i, GUID: nd.GUID, WidthEnabled: p.width,
			SpeedEnabled: p.speed, SpeedExtEnabled: p.extSpeed}
		if t != Switch {
			pt.GUID = nd.GUID + uint64(i)
		}
		nd.Ports[i] = pt
	}
	return nd
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }

// guidRange is the GUIDs a node claims: its node GUID first, then a CA's
// or router's port GUIDs (one each, in port order; a switch's ports have
// its node GUID).
type guidRange struct {
	first, last uint64
	node        *Node
}

// owner names the claim of g, a GUID of r.
func (r guidRange) owner(g uint64) guidOwner {
	if g == r.first {
		return guidOwner{r.node, -1}
	}
	return guidOwner{r.node, int(g - r.first)}
}

// claimGUIDs records the node's and its ports' GUIDs, failing on a GUID
// already in use: the lowest of them, as claimed in that order. The
// claims are ranges kept sorted, not a map entry a GUID (a file's nodes
// take theirs in increasing runs, so most land at the end of a run).
func (p *parser) claimGUIDs(lr *lineReader, nd *Node) error {
	r := guidRange{first: nd.GUID, last: nd.GUID, node: nd}
	if nd.Type != Switch {
		r.last += uint64(nd.NumPorts) // newNode checked it does not wrap
	}
	rs := p.guids
	i := len(rs)
	if i > 0 && rs[i-1].last >= r.first {
		i = sort.Search(len(rs), func(j int) bool { return rs[j].last >= r.first })
	}
	if i < len(rs) && rs[i].first <= r.last {
		g := max(r.first, rs[i].first)
		return lr.errorf("duplicate GUID 0x%016x: %s and %s", g, r.owner(g), rs[i].owner(g))
	}
	p.guids = slices.Insert(rs, i, r)
	return nil
}

// nodeDesc splits a header's tail (after the node id) into the description
// after '#' and the attribute text that follows it ("enhanced port 0 lid 3
// lmc 0"), as ibsim's parse_node_desc does: the description is either
// quoted, or bare and then runs to the end of the line, its trailing
// spaces kept, or up to the first of " enhanced port ", " base port ",
// " lid " and " lmc " found, taken in that order (a bare description
// that starts with one of them, without the space before it, is all
// description: "# enhanced port 0" names the node so and leaves its port 0
// base).
func nodeDesc(tail string) (desc, attrs string) {
	i := strings.IndexByte(tail, '#')
	if i < 0 {
		return "", tail
	}
	s := trimBlanks(tail[i+1:])
	if strings.HasPrefix(s, `"`) {
		j := strings.IndexByte(s[1:], '"')
		if j < 0 {
			return s[1:], ""
		}
		return s[1 : 1+j], s[2+j:]
	}
	for _, kw := range []string{" enhanced port ", " base port ", " lid ", " lmc "} {
		if j := strings.Index(s, kw); j >= 0 {
			return s[:j], s[j+1:]
		}
	}
	return s, ""
}

// lidLMC reads "lid L" and "lmc M" from s into pt.
func lidLMC(lr *lineReader, s string, pt *Port) error {
	if v, ok, err := keyword(lr, s, "lid "); err != nil {
		return err
	} else if ok {
		if v > maxUnicastLID {
			return lr.errorf("lid %d out of the unicast range (1-0x%x)", v, maxUnicastLID)
		}
		pt.LID = uint16(v)
	}
	if v, ok, err := keyword(lr, s, "lmc "); err != nil {
		return err
	} else if ok {
		if v > 7 {
			return lr.errorf("lmc %d out of range (0-7)", v)
		}
		pt.LMC = uint8(v)
	}
	return nil
}

// keyword finds the first "kw N" in s and parses N.
func keyword(lr *lineReader, s, kw string) (uint64, bool, error) {
	i := strings.Index(s, kw)
	if i < 0 {
		return 0, false, nil
	}
	s = trimBlanks(s[i+len(kw):])
	end := 0 // to a blank or a quote (strings.IndexAny made its set a call)
	for end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '"' {
		end++
	}
	v, err := parseNum(s[:end], 32)
	if err != nil {
		return 0, false, lr.errorf("bad number %q after %q", s[:end], strings.TrimSpace(kw))
	}
	return v, true, nil
}

// ports reads a record's port lines. The record ends after NumPorts port
// lines, at the end of the file, or at a line that is neither a port line
// nor a comment; ibsim consumes that line, so anything but a blank line or
// a comment there is reported instead of being silently dropped.
func (p *parser) ports(lr *lineReader, nd *Node, cableOf []int32) error {
	for left := nd.NumPorts; left > 0; {
		line, ok := lr.next()
		if !ok {
			return lr.err
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "[") && !strings.HasPrefix(line, "@") {
			if s := strings.TrimSpace(line); s != "" && s[0] != '#' {
				return lr.errorf("%q ends the record of %q and would be ignored; put a blank line before it", s, nd.ID)
			}
			return nil
		}
		if err := p.portLine(lr, line, nd, cableOf); err != nil {
			return err
		}
		left--
	}
	return nil
}

// portLine parses "[p](portguid) "remote"[q](portguid) options # tail",
// the node's cableOf its cables so far.
func (p *parser) portLine(lr *lineReader, line string, nd *Node, cableOf []int32) error {
	if line[0] == '@' {
		return lr.errorf("port aliases ('@' lines) are not supported")
	}
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return lr.errorf("bad port line: missing ']'")
	}
	num, err := parseDecimal(line[1:end])
	if err != nil {
		return lr.errorf("bad port number %q", line[1:end])
	}
	if num < 1 || num > nd.NumPorts {
		return lr.errorf("port %d of %q out of range (%d ports)", num, nd.ID, nd.NumPorts)
	}
	if first := cableOf[num]; first >= 0 {
		return lr.errorf("port %d of %q listed twice (first at line %d)", num, nd.ID, p.cables.at(first).at.line)
	}
	rest := skipGUIDNote(line[end+1:])
	if s := trimBlanks(rest); s == "" || s[0] != '"' {
		return lr.errorf("port %d of %q: missing quoted remote node id", num, nd.ID)
	}
	rid, rest, ok := quoted(rest)
	if !ok {
		return lr.errorf("port %d of %q: missing closing quote of remote node id", num, nd.ID)
	}
	if rid == "" {
		return lr.errorf("port %d of %q: empty remote node id", num, nd.ID)
	}
	if strings.Contains(rid, "@") {
		return lr.errorf("port aliases (%q) are not supported", rid)
	}
	if p.prefix != "" && !strings.Contains(rid, "#") {
		rid = p.prefix + "#" + rid
	}
	rport := 1
	if strings.HasPrefix(rest, "[") {
		e := strings.IndexByte(rest, ']')
		if e < 0 {
			return lr.errorf("bad remote port: missing ']'")
		}
		rport, err = parseDecimal(rest[1:e])
		if err != nil || rport < 1 {
			return lr.errorf("bad remote port %q", rest[1:e])
		}
		rest = rest[e+1:]
	}
	rest = skipGUIDNote(rest)

	pt := nd.Ports[num]
	if err := portOptions(lr, rest, pt); err != nil {
		return err
	}
	if err := p.connectionData(lr, rest, pt); err != nil {
		return err
	}
	at := lr.pos()
	cableOf[num] = p.cables.add(cable{from: pt, remoteID: rid, remotePort: rport, at: at})
	return nil
}

// skipGUIDNote drops a leading "(hex)" port GUID annotation.
func skipGUIDNote(s string) string {
	if strings.HasPrefix(s, "(") {
		if e := strings.IndexByte(s, ')'); e >= 0 {
			return s[e+1:]
		}
	}
	return s
}

func parseDecimal(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, strconv.ErrSyntax
	}
	v := 0 // at most 5 digits: no overflow
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, nil
}

// trimBlanks is strings.TrimLeft(s, " \t") without its cutset set up on
// every call (a port line's, 2% of a planarized tree's load).
func trimBlanks(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return s
}

// firstTwoFields returns the first two of strings.Fields(s) (n of them,
// at most 2) without an iterator or a slice: in one pass while the bytes
// up to the end of the second field are ASCII, else as Fields splits
// Unicode spaces.
func firstTwoFields(s string) (f [2]string, n int) {
	for i := 0; i < len(s) && n < len(f); {
		for i < len(s) && asciiSpace(s[i]) {
			i++
		}
		start := i
		for i < len(s) && !asciiSpace(s[i]) {
			if s[i] >= utf8.RuneSelf {
				f, n = [2]string{}, 0
				for w := range strings.FieldsSeq(s) {
					f[n] = w
					if n++; n == len(f) {
						break
					}
				}
				return f, n
			}
			i++
		}
		if i > start {
			f[n] = s[start:i]
			n++
		}
	}
	return f, n
}

// asciiSpace is an ASCII byte strings.Fields splits at.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// portOptions applies w=, s= and e= options found anywhere on the rest of a
// port line (outside quoted text). Other name=value words are ignored, as
// by ibsim.
func portOptions(lr *lineReader, rest string, pt *Port) error {
	if strings.IndexByte(rest, '=') < 0 {
		return nil // no option (most lines: a twentieth of a planarized tree's load went to looking)
	}
	for w := range words(rest) {
		if len(w) < 2 || w[1] != '=' {
			continue
		}
		var lo, hi uint64
		var dst *uint8
		switch w[0] {
		case 'w':
			lo, hi, dst = 1, 31, &pt.WidthEnabled
		case 's':
			lo, hi, dst = 1, 7, &pt.SpeedEnabled
		case 'e':
			lo, hi, dst = 0, 0x2f, &pt.SpeedExtEnabled
		default:
			continue
		}
		v, err := parseNum(w[2:], 8)
		if err != nil {
			return lr.errorf("bad number %q in port option %q", w[2:], w)
		}
		if v < lo || v > hi {
			return lr.errorf("bad port option %q (want %d..%d)", w, lo, hi)
		}
		*dst = uint8(v)
	}
	return nil
}

// words yields the words of s split at blanks, leaving out quoted text
// (without a slice a port line: a port line's words were a third of a
// big file's allocations).
func words(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		inQuote := false
		start := -1
		for i := 0; i <= len(s); i++ {
			if i == len(s) || (!inQuote && isSpace(s[i])) || s[i] == '"' {
				if start >= 0 && !inQuote && !yield(s[start:i]) {
					return
				}
				start = -1
				if i < len(s) && s[i] == '"' {
					inQuote = !inQuote
				}
				continue
			}
			if start < 0 && !inQuote {
				start = i
			}
		}
	}
}

// connectionData reads ibnetdiscover's tail on a port line: "lid R WxSPEED"
// after the last quote (the remote end's LID, this link's width and
// speed), and on CA lines the port's own "lid L lmc M". A tail that does
// not have that shape is ignored, as ibsim does (it warns). On router
// lines the tail is ignored whole, as ibsim's parser reads it on switch
// and CA lines only (parse_port_connection_data); w= and s= options apply
// to every kind of node.
func (p *parser) connectionData(lr *lineReader, rest string, pt *Port) error {
	if pt.Node.Type == Router {
		return nil
	}
	if pt.Node.Type != Switch {
		if err := lidLMC(lr, rest, pt); err != nil {
			return err
		}
	}
	after := rest
	if q := strings.LastIndexByte(rest, '"'); q >= 0 {
		after = rest[q+1:]
	}
	i := strings.Index(after, "lid")
	if i < 0 {
		return nil
	}
	f, n := firstTwoFields(after[i+len("lid"):])
	if n < 2 {
		return nil
	}
	if _, err := parseDecimal(f[0]); err != nil {
		return nil
	}
	x := strings.IndexByte(f[1], 'x')
	if x < 1 {
		return nil
	}
	w, err := parseDecimal(f[1][:x])
	if err != nil {
		return nil
	}
	switch w {
	case 1:
		pt.WidthEnabled = 1
	case 2:
		pt.WidthEnabled = 16
	case 4:
		pt.WidthEnabled = 1 | 2
	case 8:
		pt.WidthEnabled = 4
	case 12:
		pt.WidthEnabled = 1 | 2 | 8
	default:
		p.note(lr, "unknown link width", f[1])
	}
	switch f[1][x+1:] {
	case "SDR":
		pt.SpeedEnabled = 1
	case "DDR":
		pt.SpeedEnabled = 1 | 2
	case "QDR":
		pt.SpeedEnabled = 1 | 2 | 4
	case "FDR10":
		pt.SpeedEnabled = 1 | 2 | 4
	case "FDR":
		pt.SpeedEnabled, pt.SpeedExtEnabled = 7, 1
	case "EDR":
		pt.SpeedEnabled, pt.SpeedExtEnabled = 7, 1|2
	case "HDR":
		pt.SpeedEnabled, pt.SpeedExtEnabled = 7, 1|2|4
	case "NDR":
		pt.SpeedEnabled, pt.SpeedExtEnabled = 7, 1|2|4|8
	case "XDR":
		pt.SpeedEnabled, pt.SpeedExtEnabled = 7, 1|2|4|8|32
	default:
		p.note(lr, "unknown link speed", f[1])
	}
	return nil
}

func (p *parser) note(lr *lineReader, msg, v string) {
	if l := p.cfg.Logger; l != nil {
		l.Warn("topology: "+msg, "at", lr.pos().String(), "value", v)
	}
}

// connect checks that every link is written at both ends, consistently,
// and links the ports.
// portRef names a port in connect's errors, `"node"[port]`, formatted only
// when an error is (two Sprintfs per cable were a tenth of a big file's
// parse).
type portRef struct {
	id  string
	num int
}

func (r portRef) String() string { return fmt.Sprintf("%q[%d]", r.id, r.num) }

func (p *parser) connect() error {
	for i := int32(0); i < p.cables.n; i++ {
		c := p.cables.at(i)
		errorf := func(format string, args ...any) error {
			return &ParseError{File: c.at.file, Line: c.at.line, Msg: fmt.Sprintf(format, args...)}
		}
		from := c.from
		here := portRef{from.Node.ID, from.Num}
		re := p.ids[c.remoteID]
		rn := re.node
		if rn == nil {
			return errorf("%s: unknown remote node %q", here, c.remoteID)
		}
		if c.remotePort > rn.NumPorts {
			return errorf("%s: port %d of %q out of range (%d ports)", here, c.remotePort, rn.ID, rn.NumPorts)
		}
		rp := rn.Ports[c.remotePort]
		if rp == from {
			return errorf("%s is cabled to itself", here)
		}
		there := portRef{rn.ID, rp.Num}
		j := int32(-1)
		if of := re.cableOf; rp.Num < len(of) {
			j = of[rp.Num]
		}
		if j < 0 {
			return errorf("%s is cabled to %s, but %s has no port line for it", here, there, there)
		}
		back := p.cables.at(j)
		if back.remoteID != from.Node.ID || back.remotePort != from.Num {
			return errorf("%s is cabled to %s, but %s is cabled to %q[%d] (%s)",
				here, there, there, back.remoteID, back.remotePort, back.at)
		}
		if from.WidthEnabled&rp.WidthEnabled == 0 {
			return errorf("%s (width mask %d) and %s (width mask %d) have no common link width",
				here, from.WidthEnabled, there, rp.WidthEnabled)
		}
		if from.SpeedEnabled&rp.SpeedEnabled == 0 {
			return errorf("%s (speed mask %d) and %s (speed mask %d) have no common link speed",
				here, from.SpeedEnabled, there, rp.SpeedEnabled)
		}
		from.Remote = rp
		rp.Remote = from
	}
	return nil
}
