// Package randtopo makes random but valid ibsim topologies from a seed,
// for the differential tests that compare ibscript's tools with
// infiniband-diags on fabrics nobody wrote by hand (tests/ibsimdiff's
// TestRandomTopologies): switches of 2 to 64 ports (now and then 128)
// joined in a tree with extra links (rings, parallel links) or in a long
// chain (LID-routed paths through up to 15 switches, ibsim's limit is
// 16, or through 17 to 20, past it), CAs of one to four ports cabled to different switches or left
// with ports unlinked, routers, unused switch ports, links of every width
// ibsim takes (1x, 2x, 4x, 8x, 12x) at SDR to HDR with ends that enable
// more than the link runs at, node descriptions with quotes, '#', tabs,
// control and invalid UTF-8 bytes, doubled and trailing spaces,
// keywords inside quotes, none at all, an empty quoted one, spaces
// alone, exactly the 63 bytes ibsim keeps or past them (64, 100),
// rings (the last switch cabled back to the first), switches with
// enhanced or base port 0, chassis (shared
// system image GUIDs); for some seeds an island no SM reaches (its
// switches and CAs, a dual-rail CA's second port on it, a router between
// the two parts), LIDs preset in the file (sparse: forwarding tables
// with holes) and GUIDs at the edges (a last port GUID of
// 0xffffffffffffffff, the high bit set, ports across it). The same seed
// always gives the same text.
//
// What ibsim accepts (its net file parser): a node description follows
// '#' on the node line, quoted (to the next '"', so no quote inside) or
// bare (to the end of the line, cut at " lid ", " lmc ", " enhanced port
// ", " base port "); "enhanced port 0" or "base port 0" after it sets a
// switch's port 0; a port line's options are w= (enabled width mask: 1
// 1x, 2 4x, 4 8x, 8 12x, 16 2x), s= (1 SDR, 2 DDR, 4 QDR, or'ed) and e=
// (extended speeds: 1 FDR, 2 EDR, 4 HDR; NDR's 8 is upstream ibsim 0.12's,
// Debian's 0.10 refuses it), or ibnetdiscover's "lid N 4xFDR10" text (the
// only way to FDR10), and a link whose ends
// enable no common width or speed stops ibsim; node ids may not hold '#'
// or '@'. ibsim (and umad2sim's SIM_HOST) find a node by an id of at most
// 31 bytes, so ids stay short.
package randtopo

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Fabric is one generated topology.
type Fabric struct {
	Seed uint64
	// Text is the ibsim topology file. Its first node is OpenSM's.
	Text string
	// Hosts are the ids of the CAs whose port 1 is cabled (ibsim attaches
	// a client to port 1 of a CA): where the tools can run.
	Hosts []string
	// Bare are the CAs whose port 1 is unlinked: a tool run there sits on
	// a Down port (ibsim attaches to port 1), with no LID and no SM.
	Bare []string
	// Switches are the switches' ids (the island's too).
	Switches []string
	// Ports is each node's number of ports, by id.
	Ports map[string]int
	// Island are the CAs of the island (a part no SM reaches: its
	// switches, CAs, a dual-rail CA's second port, a router's second
	// port) whose port 1 is cabled there: a tool run there has LID 0.
	Island []string
	// LMC is the LMC OpenSM is to give the CAs' ports (its --lmc): 0, 1
	// or 2, so a CA port has 1, 2 or 4 LIDs.
	LMC int
	// InitPorts is how many ports OpenSM leaves in Init: both ends of
	// every router link and of every link between two CAs.
	InitPorts int
	// GUIDs is each node's GUID as ibsim gives it, by id: a CA's or
	// router's port p has GUID+p.
	GUIDs map[string]uint64
}

type port struct {
	peer     *node
	peerPort int
	opts     string // " w=2 s=4" or ""
}

type node struct {
	kind   string // "Switch", "Hca", "Rt"
	id     string
	desc   string // the text after '#' on the node line ("" for none)
	pre    string // lines before the node line (sysimgguid=, vendid=)
	ports  []port // index 0 unused for CAs and routers
	island bool   // in the part no SM reaches
	lids   []int  // LIDs the file presets: [0] a switch's, [p] a CA's port p (0 none)
}

func (n *node) free() []int {
	var f []int
	for i := 1; i < len(n.ports); i++ {
		if n.ports[i].peer == nil {
			f = append(f, i)
		}
	}
	return f
}

type gen struct {
	r     *rand.Rand
	links int // links OpenSM leaves in Init: routers', CAs' back to back, the island's
}

// Generate returns the topology of seed.
func Generate(seed uint64) *Fabric {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x6f6464746f706f))}
	r := g.r
	sws := g.switches()
	cas := g.cas(sws)
	var rts []*node
	for i := range r.IntN(3) {
		np := 1 + r.IntN(2)
		rt := &node{kind: "Rt", id: fmt.Sprintf("rt%d", i), ports: make([]port, np+1)}
		rts = append(rts, rt)
		for p := 1; p <= np; p++ {
			if g.linkAny(rt, p, sws) {
				g.links++
			}
		}
	}
	var isl []*node
	if r.IntN(3) == 0 {
		isl = g.island(cas, &rts, sws)
	}
	for _, n := range append(append(append(append([]*node{}, sws...), cas...), rts...), isl...) {
		if n.kind == "Switch" {
			n.desc = g.switchDesc(n)
		} else {
			n.desc = g.desc(n)
		}
	}
	all := append(append(append(append([]*node{}, sws...), cas...), rts...), isl...)
	g.vendors(all)
	if r.IntN(4) == 0 {
		g.presetLIDs(all)
	}
	// OpenSM's node first: a CA or a switch; the rest shuffled.
	var first *node
	if r.IntN(2) == 0 || cas[0].ports[1].peer == nil {
		first = sws[0]
	} else {
		first = cas[0]
	}
	rest := make([]*node, 0, len(all)-1)
	for _, n := range all {
		if n != first {
			rest = append(rest, n)
		}
	}
	r.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
	var edges map[*node]uint64
	if r.IntN(3) == 0 {
		edges = g.edgeGUIDs(all)
	}
	oddShapes(seed, sws, cas)
	f := write(seed, 2*g.links, append([]*node{first}, rest...), edges)
	f.LMC = []int{0, 0, 1, 2}[r.IntN(4)]
	return f
}

// oddShapes adds, from a stream of its own (each seed's fabric of the
// first stream stays as it was, the new shapes on top of it): for one
// seed in three a ring, the last switch cabled back to the first (not on
// a chain past ibsim's 16 switches, which would halve it); for one in
// two odd descriptions on a few CAs: an empty quoted one, one of spaces,
// one of 100 bytes (ibsim keeps 63), one of '#' and quotes alone.
func oddShapes(seed uint64, sws, cas []*node) {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x72696e6773))}
	r := g.r
	if n := len(sws); r.IntN(3) == 0 && n < 17 {
		g.link(sws[n-1], sws[0])
	}
	if r.IntN(2) == 0 {
		odd := []string{`""`, `"   "`, "", `"#"`, `# "" #`}
		long := "hundred bytes "
		odd[2] = long + strings.Repeat("ü", (100-len(long))/2)
		for i, ca := range pick(r, cas, 1+r.IntN(3)) {
			ca.desc = odd[(i+r.IntN(len(odd)))%len(odd)]
		}
	}
}

// island is a part of the fabric no SM reaches: one or two switches and
// a few CAs on them, and perhaps a CA of cas with a second port there
// (dual rail: another subnet) and a router between the two parts. Every
// link of it stays in Init.
func (g *gen) island(cas []*node, rts *[]*node, sws []*node) []*node {
	r := g.r
	var isw, out []*node
	for i := range 1 + r.IntN(2) {
		n := &node{kind: "Switch", id: fmt.Sprintf("isw%d", i), ports: make([]port, []int{4, 5, 8, 12}[r.IntN(4)]+1), island: true}
		isw = append(isw, n)
		if i > 0 && g.link(n, isw[i-1]) {
			g.links++
		}
	}
	for i := range 1 + r.IntN(3) {
		np := 1 + r.IntN(2)
		ca := &node{kind: "Hca", id: fmt.Sprintf("ica%d", i), ports: make([]port, np+1), island: true}
		out = append(out, ca)
		for p := 1; p <= np; p++ {
			if (p == 1 || r.IntN(2) == 0) && g.linkAny(ca, p, isw) {
				g.links++
			}
		}
	}
	// Dual rail: a CA's last port on the island (never OpenSM's CA,
	// cas[0], whose other ports OpenSM would not sweep).
	for _, ca := range pick(g.r, cas[1:], 1+r.IntN(2)) {
		if p := len(ca.ports) - 1; p > 1 && ca.ports[p].peer == nil && g.linkAny(ca, p, isw) {
			g.links++
		}
	}
	// A router between the two parts.
	if r.IntN(2) == 0 {
		rt := &node{kind: "Rt", id: fmt.Sprintf("rt%d", len(*rts)), ports: make([]port, 3)}
		if g.linkAny(rt, 1, sws) {
			g.links++
		}
		if g.linkAny(rt, 2, isw) {
			g.links++
		}
		*rts = append(*rts, rt)
	}
	return append(isw, out...)
}

// presetLIDs gives some switches and CA ports of all LIDs in the file
// (ibsim's " lid N" on a switch's node line, "# lid N" on a CA's port
// line), spread up to 0x2fff and aligned for any LMC: OpenSM keeps them,
// so the forwarding tables have holes between them.
func (g *gen) presetLIDs(all []*node) {
	r := g.r
	used := map[int]bool{}
	lid := func() int {
		for {
			if l := 4 * (1 + r.IntN(0x2fff/4)); !used[l] {
				used[l] = true
				return l
			}
		}
	}
	for _, n := range all {
		if n.island || n.kind == "Rt" || r.IntN(2) == 0 {
			continue
		}
		n.lids = make([]int, len(n.ports))
		if n.kind == "Switch" {
			n.lids[0] = lid()
			continue
		}
		for p := 1; p < len(n.ports); p++ {
			if pt := n.ports[p]; pt.peer != nil && !strings.Contains(pt.opts, "#") && r.IntN(3) > 0 {
				n.lids[p] = lid()
			}
		}
	}
}

// edgeGUIDs picks GUIDs at the edges for a few nodes of all: the last
// GUID there is (a CA's last port's, a switch's), the high bit set, a
// CA's ports across the high bit.
func (g *gen) edgeGUIDs(all []*node) map[*node]uint64 {
	r := g.r
	out := map[*node]uint64{}
	for i, n := range pick(r, all, 2+r.IntN(3)) {
		np := uint64(len(n.ports) - 1)
		if n.kind == "Switch" {
			np = 0
		}
		switch i {
		case 0:
			out[n] = ^uint64(0) - np // the last port's GUID is 0xffffffffffffffff
		case 1:
			out[n] = 1<<63 | 0x1000
		case 2:
			out[n] = 1<<63 - 1 - np/2 // its ports on both sides of the high bit
		default:
			out[n] = 0xfedcba9876543210
		}
	}
	return out
}

// switches are 3 to 8 switches of 2 to 64 ports (rarely 128) in a tree
// (often a chain: each switch on the one before it), or, for one seed in
// four, a chain of 10 to 15 (LID-routed MADs cross up to 17 links, ibsim
// forwards them through 16 switches at most) or, one chain in four, of 17
// to 20 (MADs to the far end dropped), then extra links: rings, parallel
// links.
func (g *gen) switches() []*node {
	r := g.r
	var sws []*node
	n, chain := 3+r.IntN(6), r.IntN(4) == 0
	if chain {
		n = 10 + r.IntN(6)
		if r.IntN(4) == 0 {
			n = 17 + r.IntN(4) // past ibsim's 16: the far LIDs unreachable
		}
	}
	for i := range n {
		sizes := []int{2, 3, 4, 5, 7, 8, 12, 18, 24, 36, 36, 48, 64}
		size := sizes[r.IntN(len(sizes))]
		if r.IntN(40) == 0 {
			size = 128 // a 64-port switch split in two
		}
		sws = append(sws, &node{kind: "Switch", id: fmt.Sprintf("sw%d", i), ports: make([]port, size+1)})
	}
	for i := 1; i < len(sws); i++ {
		j := i - 1
		if !chain && r.IntN(3) == 0 {
			j = r.IntN(i)
		}
		// On the chosen switch, or the nearest before it with a port
		// left: the tree holds every switch.
		for ; j >= 0 && !g.link(sws[i], sws[j]); j-- {
		}
		if j < 0 {
			panic(fmt.Sprintf("randtopo: no switch before %s has a free port", sws[i].id))
		}
	}
	for range r.IntN(len(sws)/2 + 2) {
		a, b := sws[r.IntN(len(sws))], sws[r.IntN(len(sws))]
		if a != b {
			g.link(a, b)
		}
	}
	return sws
}

// cas are 6 to 25 CAs of 1 to 4 ports on the switches sws, and a few
// cabled back to back.
func (g *gen) cas(sws []*node) []*node {
	r := g.r
	var cas []*node
	for i := range 6 + r.IntN(20) {
		np := []int{1, 1, 1, 2, 2, 2, 3, 4}[r.IntN(8)]
		ca := &node{kind: "Hca", id: fmt.Sprintf("ca%d", i), ports: make([]port, np+1)}
		cas = append(cas, ca)
		// Port 1 cabled (a host the tools can run on), or, for one CA
		// in eight, left unlinked (ibsim attaches a client to port 1:
		// the CA is only a target).
		bare := np > 1 && r.IntN(8) == 0
		for p := 1; p <= np; p++ {
			if (p == 1 && !bare) || r.IntN(10) < 7 {
				g.linkAny(ca, p, sws)
			}
		}
	}
	// CAs cabled back to back: a CA whose last port is free to another's.
	for range r.IntN(3) {
		a, b := cas[r.IntN(len(cas))], cas[r.IntN(len(cas))]
		pa, pb := len(a.ports)-1, len(b.ports)-1
		if a != b && pa > 1 && pb > 1 && a.ports[pa].peer == nil && b.ports[pb].peer == nil {
			oa, ob := g.linkOpts(true)
			a.ports[pa] = port{peer: b, peerPort: pb, opts: oa}
			b.ports[pb] = port{peer: a, peerPort: pa, opts: ob}
			g.links++ // no SM reaches it through a CA: both ends stay in Init
		}
	}
	return cas
}

// vendors gives some of all a chassis (a shared system image GUID), a
// Topspin or SilverStorm chassis, and other vendors.
func (g *gen) vendors(all []*node) {
	r := g.r
	for _, n := range pick(r, all, 2+r.IntN(2)) {
		n.pre += "sysimgguid=0x5000\n"
	}
	// A Topspin (or SilverStorm) chassis, whose members' system image
	// GUIDs differ in the slot byte libibnetdisc ignores for them.
	vend := []string{"0x5ad", "0x66a"}[r.IntN(2)]
	for i, n := range pick(r, all, r.IntN(4)) {
		if !strings.Contains(n.pre, "sysimgguid") {
			n.pre += fmt.Sprintf("vendid=%s\nsysimgguid=0x5ad0001%02x000000\n", vend, i)
		}
	}
	// Nodes of other vendors: an unknown one, Mellanox; Voltaire CAs
	// (libibnetdisc's chassis rules for Voltaire switches are not
	// ibscript's: ibnetdiscover -g refuses them).
	for _, n := range pick(r, all, r.IntN(4)) {
		if !strings.Contains(n.pre, "vendid") {
			v := []string{"0x1234", "0x2c9", "0x8f1"}[r.IntN(3)]
			if v == "0x8f1" && n.kind == "Switch" {
				v = "0x1234"
			}
			n.pre += "vendid=" + v + "\n"
		}
	}
}

// write is the topology of nodes, in that order; edges are the node
// GUIDs some of them get from a switchguid=, caguid= or rtguid= line
// before them, the count ibsim keeps set back after them.
func write(seed uint64, initPorts int, nodes []*node, edges map[*node]uint64) *Fabric {
	f := &Fabric{Seed: seed, InitPorts: initPorts, Ports: map[string]int{}, GUIDs: map[string]uint64{}}
	var b strings.Builder
	fmt.Fprintf(&b, "# Random topology from internal/randtopo, seed %d.\n# InitPorts: %d\n\n", seed, f.InitPorts)
	// ibsim's GUID counts (new_node): a switch takes one GUID, a CA or
	// router one and one a port.
	next := map[string]uint64{"Switch": 0x200000, "Hca": 0x100000, "Rt": 0}
	guidLine := map[string]string{"Switch": "switchguid", "Hca": "caguid", "Rt": "rtguid"}
	for _, n := range nodes {
		b.WriteString(n.pre)
		f.Ports[n.id] = len(n.ports) - 1
		take := uint64(len(n.ports))
		if n.kind == "Switch" {
			take = 1
		}
		guid, edge := edges[n]
		f.GUIDs[n.id] = next[n.kind]
		if edge {
			f.GUIDs[n.id] = guid
			fmt.Fprintf(&b, "%s=%#x\n", guidLine[n.kind], guid)
		}
		fmt.Fprintf(&b, "%s\t%d \"%s\"", n.kind, len(n.ports)-1, n.id)
		if n.desc != "" {
			b.WriteString(" # " + n.desc)
		}
		if n.kind == "Switch" && n.lids != nil && n.lids[0] != 0 {
			fmt.Fprintf(&b, " lid %d", n.lids[0])
		}
		b.WriteString("\n")
		for i := 1; i < len(n.ports); i++ {
			if p := n.ports[i]; p.peer != nil {
				fmt.Fprintf(&b, "[%d]\t\"%s\"[%d]%s", i, p.peer.id, p.peerPort, p.opts)
				if n.kind == "Hca" && n.lids != nil && n.lids[i] != 0 {
					fmt.Fprintf(&b, "\t# lid %d", n.lids[i])
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
		if edge {
			fmt.Fprintf(&b, "%s=%#x\n", guidLine[n.kind], next[n.kind])
		} else {
			next[n.kind] += take
		}
		switch {
		case n.kind == "Hca" && n.island:
			if n.ports[1].peer != nil {
				f.Island = append(f.Island, n.id)
			}
		case n.kind == "Hca":
			if n.ports[1].peer != nil {
				f.Hosts = append(f.Hosts, n.id)
			} else {
				f.Bare = append(f.Bare, n.id)
			}
		case n.kind == "Switch":
			f.Switches = append(f.Switches, n.id)
		}
	}
	f.Text = b.String()
	return f
}

// pick returns k distinct elements of ns.
func pick(r *rand.Rand, ns []*node, k int) []*node {
	idx := r.Perm(len(ns))
	var out []*node
	for _, i := range idx[:min(k, len(ns))] {
		out = append(out, ns[i])
	}
	return out
}

// link cables a free port of a to a free port of b.
func (g *gen) link(a, b *node) bool {
	fa := a.free()
	if len(fa) == 0 {
		return false
	}
	return g.linkPort(a, fa[g.r.IntN(len(fa))], b)
}

// linkAny cables port p of a to a free port of a random switch of sws
// that has one left.
func (g *gen) linkAny(a *node, p int, sws []*node) bool {
	for _, i := range g.r.Perm(len(sws)) {
		if g.linkPort(a, p, sws[i]) {
			return true
		}
	}
	return false
}

// linkPort cables port p of a to a free port of b; false when b has
// none left.
func (g *gen) linkPort(a *node, p int, b *node) bool {
	fb := b.free()
	if len(fb) == 0 {
		return false
	}
	q := fb[g.r.IntN(len(fb))]
	oa, ob := g.linkOpts(a.kind != "Rt")
	a.ports[p] = port{peer: b, peerPort: q, opts: oa}
	b.ports[q] = port{peer: a, peerPort: p, opts: ob}
	return true
}

// Widths and speeds as ibsim's w=, s= and e= masks.
var (
	widths = []int{1, 2, 4, 8, 16}
	speeds = []struct{ s, e int }{{1, 0}, {2, 0}, {4, 0}, {7, 1}, {7, 2}, {7, 4}}
)

// linkOpts are a link's two ends' options: none (ibsim's defaults), FDR10
// (when fdr10: ibsim reads that text on CA and switch port lines only,
// not a router's), or a width and speed both enable, one end perhaps
// enabling more.
func (g *gen) linkOpts(fdr10 bool) (a, b string) {
	r := g.r
	if r.IntN(5) == 0 {
		return "", ""
	}
	if r.IntN(12) == 0 && fdr10 {
		// FDR10, which ibsim takes only from ibnetdiscover's text.
		o := fmt.Sprintf("\t# lid 0 %sxFDR10", []string{"1", "4", "12"}[r.IntN(3)])
		return o, o
	}
	w, sp := widths[r.IntN(len(widths))], speeds[r.IntN(len(speeds))]
	wa, sa, ea := w, sp.s, sp.e
	wb, sb, eb := w, sp.s, sp.e
	if r.IntN(3) == 0 { // one end enables more
		wb |= widths[r.IntN(len(widths))]
		sb |= 1 << r.IntN(3)
		if eb != 0 {
			eb |= 1 << r.IntN(3)
		}
	}
	if r.IntN(2) == 0 {
		wa, sa, ea, wb, sb, eb = wb, sb, eb, wa, sa, ea
	}
	return opts(wa, sa, ea), opts(wb, sb, eb)
}

func opts(w, s, e int) string {
	o := fmt.Sprintf("\tw=%d s=%d", w, s)
	if e != 0 {
		o += fmt.Sprintf(" e=%d", e)
	}
	return o
}

// descs are bare descriptions (to the end of the line): what the tools'
// parsers and the scripts' awk trip on.
var descs = []string{
	`%s HCA-1`,
	`%s "quoted" desc`,
	`%s  doubled  spaces`,
	`%s trailing   `,
	`%s #hash # again`,
	`%s back\slash\t`,
	`%s ñodo–ÿ 日本`,
	`%s port 0`,
	`%s's (paren) a.b`,
	`MF0;%s:MQM8700/U1`,
	`%s mlx5_0`,
	"%s\ttab\there",
	"%s \x01ctl\x7f\x1b[0m",
	"%s bad\xff\xfeutf8\xc3",
	`"%s quoted lid 7 lmc 1 # q"`,
	`"%s"`,
	`"%s   "`,
}

// desc is a CA's or router's description: one of descs, a number, a long
// one (64 bytes: ibsim keeps 63, here cutting a UTF-8 sequence), or none (the
// node id).
func (g *gen) desc(n *node) string {
	switch k := g.r.IntN(len(descs) + 3); {
	case k < len(descs):
		return fmt.Sprintf(descs[k], n.id)
	case k == len(descs):
		return ""
	case k == len(descs)+1:
		return fmt.Sprintf("%d", 10+g.r.IntN(90))
	case g.r.IntN(2) == 0:
		// 63 bytes, all ibsim keeps: whole.
		d := n.id + " sixty-three "
		return d + strings.Repeat("x", 63-len(d))
	default:
		// 64 bytes, the most ibscript's parser takes: ibsim keeps 63,
		// cutting the euro sign's last byte.
		d := n.id + " long"
		return d + strings.Repeat("-", 64-len(d)-len("é€")) + "é€"
	}
}

// switchDesc is a switch's description, quoted or bare, then perhaps
// enhanced or base port 0.
func (g *gen) switchDesc(n *node) string {
	r := g.r
	var d string
	switch r.IntN(5) {
	case 0:
		d = ""
	case 4:
		d = n.id + " bare switch" // to " enhanced port " or " base port "
	case 1:
		d = fmt.Sprintf(`"%s # sw;%d"`, n.id, r.IntN(100))
	case 2:
		d = fmt.Sprintf(`"%s  switch "`, n.id)
	default:
		d = fmt.Sprintf(`"MF0;%s:SX6036/U1"`, n.id)
	}
	switch r.IntN(3) {
	case 0:
		return strings.TrimSpace(d + " enhanced port 0")
	case 1:
		return strings.TrimSpace(d + " base port 0")
	}
	return d
}
