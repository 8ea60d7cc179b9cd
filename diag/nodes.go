package diag

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// The node lists of ibswitches, ibhosts, ibrouters and ibnodes. In
// infiniband-diags these are shell scripts: each runs ibnetdiscover (or
// cats the topology file given as argument) and filters its node lines
// with awk. The text here is that filter applied to the lines ibscript's
// ibnetdiscover writer prints, so it is byte for byte theirs, quirks of
// the awk program included (a description containing "port 0" is cut and
// rejoined as ibswitches does).

// NodesOptions selects the nodes of a listing.
type NodesOptions struct {
	// Types are the node types listed, each as its own block in this
	// order: ibhosts {CA}, ibswitches {Switch}, ibrouters {Router},
	// ibnodes {CA, Switch} (it runs ibhosts, then ibswitches).
	Types []topo.NodeType
}

// Node is one node of a listing; its JSON is docs/diag/nodes.schema.json.
type Node struct {
	Type        string `json:"type"` // "CA", "Switch" or "Router"
	GUID        GUID   `json:"guid"`
	Ports       int    `json:"ports"`       // physical ports (a switch's port 0 not counted)
	Description string `json:"description"` // the node-name-map's name, else the NodeDescription
	// Switches only: port 0's LID and LMC, and whether port 0 is an
	// enhanced one ("base" or "enhanced").
	LID   *uint16 `json:"lid,omitempty"`
	LMC   *uint8  `json:"lmc,omitempty"`
	Port0 string  `json:"port0,omitempty"`
}

// NodeList is the result of a listing.
type NodeList struct {
	Nodes []Node `json:"nodes"`

	// text is the ibnetdiscover output the scripts would have filtered
	// (Nodes), and types the listing's: WriteNodes filters it as they do.
	text  string
	types []topo.NodeType
}

// Nodes discovers the fabric and lists its nodes of the given types. A
// discovery that missed routes returns what it found and a
// DiscoveryErrors.
func Nodes(ctx context.Context, e *Env, o NodesOptions) (*NodeList, error) {
	d, err := e.Discover(ctx)
	if err != nil {
		return nil, err
	}
	l := NodesOf(d.Fabric, e.NodeNames, o)
	var text strings.Builder
	if err := topo.WriteIBNetDiscover(&text, d.Fabric, &topo.WriteOptions{NameMap: e.NodeNames}); err != nil {
		return nil, err
	}
	l.text, l.types = text.String(), o.Types
	if len(d.Errors) > 0 {
		return l, DiscoveryErrors(d.Errors)
	}
	return l, nil
}

// NodesOf lists the nodes of f (discovered, or read from a topology
// file) in ibnetdiscover's order: by type as o asks, each type in reverse
// discovery (or file) order. names is the node-name-map, which applies
// to switches as ibnetdiscover applies it.
func NodesOf(f *topo.Fabric, names map[uint64]string, o NodesOptions) *NodeList {
	l := &NodeList{Nodes: []Node{}}
	for _, typ := range o.Types {
		for i := len(f.Nodes) - 1; i >= 0; i-- {
			n := f.Nodes[i]
			if n.Type != typ {
				continue
			}
			e := Node{Type: nodeType(n.Type), GUID: GUID(n.GUID), Ports: n.NumPorts, Description: topo.HeaderName(n, names)}
			if n.Type == topo.Switch {
				var lid uint16
				var lmc uint8
				if len(n.Ports) > 0 && n.Ports[0] != nil {
					lid, lmc = n.Ports[0].LID, n.Ports[0].LMC
				}
				e.LID, e.LMC, e.Port0 = &lid, &lmc, "base"
				if n.EnhancedPort0 {
					e.Port0 = "enhanced"
				}
			}
			l.Nodes = append(l.Nodes, e)
		}
	}
	return l
}

// WriteNodes prints l as the scripts print it: from the whole
// ibnetdiscover output when l came from a discovery (Nodes), so that the
// escapes of their echo in other lines (a "\c" in a description stops the
// listing there) act as theirs do, else from l's node lines alone.
func WriteNodes(w io.Writer, l *NodeList) error {
	if l.text != "" {
		return FilterNodeLines(w, l.text, NodesOptions{Types: l.types})
	}
	bw := bufio.NewWriter(w)
	for _, n := range l.Nodes {
		var line string
		switch n.Type {
		case "Switch":
			var lid uint16
			var lmc uint8
			if n.LID != nil {
				lid = *n.LID
			}
			if n.LMC != nil {
				lmc = *n.LMC
			}
			port0 := n.Port0
			if port0 == "" {
				port0 = "base"
			}
			line = fmt.Sprintf("Switch\t%d \"S-%016x\"\t\t# \"%s\" %s port 0 lid %d lmc %d",
				n.Ports, uint64(n.GUID), n.Description, port0, lid, lmc)
		case "CA":
			line = fmt.Sprintf("Ca\t%d \"H-%016x\"\t\t# \"%s\"", n.Ports, uint64(n.GUID), n.Description)
		case "Router":
			line = fmt.Sprintf("Rt\t%d \"R-%016x\"\t\t# \"%s\"", n.Ports, uint64(n.GUID), n.Description)
		default:
			return fmt.Errorf("diag: node %s: unknown type %q", n.GUID, n.Type)
		}
		filterNodeLine(bw, n.Type, line)
	}
	return bw.Flush()
}

// FilterNodeLines is the scripts' pipeline over a topology file in
// ibnetdiscover's format (ibhosts FILE, ibswitches FILE), or over
// ibnetdiscover's output: `text="$(cat FILE)"; echo "$text" | awk`, the
// node lines of the given types, in the file's order, each type its own
// pass (as ibnodes runs ibhosts, then ibswitches). The scripts run under
// /bin/sh, dash on Debian, whose echo interprets backslash escapes
// (dashEcho).
func FilterNodeLines(w io.Writer, text string, o NodesOptions) error {
	bw := bufio.NewWriter(w)
	out, _ := dashEcho(strings.TrimRight(text, "\n"))
	var lines []string
	if out != "" {
		lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	}
	for _, typ := range o.Types {
		for _, line := range lines {
			filterNodeLine(bw, nodeType(typ), line)
		}
	}
	return bw.Flush()
}

var (
	hashRun = regexp.MustCompile(`#[ \t]*`)
	port0Re = regexp.MustCompile(`port 0.*`)
)

// filterNodeLine is one line through the awk program of the script
// listing typ ("CA": ibhosts, "Switch": ibswitches, "Router": ibrouters),
// rule by rule: the node rule, then /^ib/ (print, next), then the
// ibpanic:, ibwarn: and iberror: rules, each printing the line again.
func filterNodeLine(w *bufio.Writer, typ, line string) {
	f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
	field := func(i int) string {
		if i <= len(f) {
			return f[i-1]
		}
		return ""
	}
	head := func() string { return field(1) + "\t: 0x" + awkSubstr(field(3), 4, 16) + " ports " + field(2) + " " }
	switch {
	case typ == "CA" && strings.HasPrefix(line, "Ca"), typ == "Router" && strings.HasPrefix(line, "Rt"):
		w.WriteString(head() + afterHash(line) + "\n")
	case typ == "Switch" && strings.HasPrefix(line, "Switch"):
		desc := afterHash(line)
		pi := awkMatch(port0Re, desc)
		pinfo := awkSubstrToEnd(desc, pi)
		desc = awkSubstr(desc, 1, pi-2)
		typ := "base port 0"
		ti := strings.Index(desc, typ) + 1
		if ti == 0 {
			typ = "enhanced port 0"
			ti = strings.Index(desc, typ) + 1
			if ti != 0 {
				desc = awkSubstr(desc, 1, ti-2)
			}
		} else {
			desc = awkSubstr(desc, 1, ti-2)
		}
		if ti == 0 {
			w.WriteString(head() + desc + " " + pinfo + "\n")
		} else {
			w.WriteString(head() + desc + " " + typ + " " + pinfo + "\n")
		}
	}
	if strings.HasPrefix(line, "ib") {
		w.WriteString(line + "\n")
		return
	}
	for _, s := range []string{"ibpanic:", "ibwarn:", "iberror:"} {
		if strings.Contains(line, s) {
			w.WriteString(line + "\n")
		}
	}
}

// afterHash is substr($0, match($0, "#[ \t]*")+RLENGTH): the line after
// its first '#' and the blanks that follow; the whole line when it has
// none (match 0, RLENGTH -1).
func afterHash(line string) string {
	if m := hashRun.FindStringIndex(line); m != nil {
		return line[m[1]:]
	}
	return line
}

// awkMatch is awk's match(): the 1-based position of re's first match,
// 0 when none.
func awkMatch(re *regexp.Regexp, s string) int {
	if m := re.FindStringIndex(s); m != nil {
		return m[0] + 1
	}
	return 0
}

// awkSubstr is awk's substr(s, m, n) for the arguments the scripts
// pass (m >= 1): characters m..m+n-1 (1-based) clipped to s, "" when n
// is not positive.
func awkSubstr(s string, m, n int) string {
	lo, hi := max(m, 1), min(m+n, len(s)+1)
	if hi <= lo {
		return ""
	}
	return s[lo-1 : hi-1]
}

// awkSubstrToEnd is awk's substr(s, m): from character m to the end; a
// start before 1 gives the whole string (mawk and gawk agree).
func awkSubstrToEnd(s string, m int) string {
	if m < 1 {
		return s
	}
	if m > len(s) {
		return ""
	}
	return s[m-1:]
}

// dashEcho is what dash's `echo "$arg"` prints: arg with its backslash
// escapes converted (\a \b \f \n \r \t \v \\, \NNN and \0NNN octal, up to
// three digits; a backslash before anything else stays), then a newline;
// \c ends the output there, newline included (stopped is then true). An
// arg of exactly "-n" is echo's option: nothing is printed.
func dashEcho(arg string) (out string, stopped bool) {
	if arg == "-n" {
		return "", false
	}
	isOct := func(c byte) bool { return c >= '0' && c <= '7' }
	var b strings.Builder
	b.Grow(len(arg) + 1)
	for i := 0; i < len(arg); {
		c := arg[i]
		i++
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i < len(arg) && arg[i] == 'c' {
			return b.String(), true
		}
		if i+1 < len(arg) && arg[i] == '0' && isOct(arg[i+1]) {
			i++
		}
		if i == len(arg) {
			b.WriteByte('\\')
			break
		}
		if e := strings.IndexByte("\\abfnrtv", arg[i]); e >= 0 {
			b.WriteByte("\\\a\b\f\n\r\t\v"[e])
			i++
			continue
		}
		if !isOct(arg[i]) {
			b.WriteByte('\\')
			continue
		}
		v := 0
		for n := 0; n < 3 && i < len(arg) && isOct(arg[i]); n++ {
			v = v<<3 + int(arg[i]-'0')
			i++
		}
		b.WriteByte(byte(v))
	}
	b.WriteByte('\n')
	return b.String(), false
}
