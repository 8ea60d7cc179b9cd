package diag

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// ibfindnodesusing (infiniband-diags' ibfindnodesusing.pl): the CAs whose
// LIDs a switch routes out of one port, and those the switch at the other
// end routes back. The Perl script reads `ibnetdiscover -g`'s text for the
// switch and the link, and `ibroute -G GUID`'s for the routes; this file
// reads the same texts, made by the same writers (topo.WriteIBNetDiscover,
// WriteIBRoute) from one discovery, with the script's regular expressions,
// so its quirks carry over: a port argument is looked up as typed ("01"
// finds no link), a name argument is formatted as a GUID first (so only a
// description containing that text matches), the hosts are compressed as
// its compress_hostlist does and printed after a space.

// FindNodesUsingOptions are ibfindnodesusing's arguments.
type FindNodesUsingOptions struct {
	Switch string `lua:"switch"` // <switch_guid|switch_name>
	Port   string `lua:"port"`   // <port>, as typed
}

// FindNodesUsing is ibfindnodesusing's result. Found false is the
// script's "Switch ... not found" (exit 1).
type FindNodesUsing struct {
	Target     string `json:"target"` // the switch argument as format_guid makes it
	Found      bool   `json:"found"`
	SwitchGUID string `json:"switch_guid,omitempty"`
	Port       string `json:"port"`
	Desc       string `json:"desc,omitempty"` // the switch line's text the script takes
	RemoteGUID string `json:"remote_guid,omitempty"`
	RemotePort string `json:"remote_port,omitempty"`
	RemoteDesc string `json:"remote_desc,omitempty"`
	// Out are the hosts the switch routes out of Port, In those the
	// remote switch routes back, each as the script prints them
	// (compressed ranges: "h001-03" for h001 to h003).
	Out []string `json:"out"`
	In  []string `json:"in"`
	// outWords and inWords are the lines' words as the script splits
	// them (an empty first one: the undef its list starts with).
	outWords, inWords []string
}

// FormatGUID is IBswcountlimits' format_guid: A-F lowered, the text after
// the first "0x" (or all of it) left-padded with zeros to 16.
func FormatGUID(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'F' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
	if _, after, ok := strings.Cut(s, "0x"); ok {
		s = after
	}
	if len(s) < 16 {
		s = strings.Repeat("0", 16-len(s)) + s
	}
	return "0x" + s
}

var (
	fnuSwitchMain = regexp.MustCompile(`^Switch.*"S-(.*)"\s+# (.*) port.*`)
	fnuSwitchEnds = regexp.MustCompile(`^Switch.*"S-(.*)"\s+#.*"(.*)".* lid (\d+).*`)
	// The four port lines of get_link_ends: plain, local [ext N], remote
	// [ext N], both; their groups in the order guid, port, desc.
	fnuPorts = []struct {
		re                    *regexp.Regexp
		loc, guid, port, desc int
	}{
		{regexp.MustCompile(`^\[(\d+)\]\s+"[HSR]-(.+)"\[(\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 2, 3, 5},
		{regexp.MustCompile(`^\[(\d+)\]\[ext (\d+)\]\s+"[HSR]-(.+)"\[(\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 3, 4, 6},
		{regexp.MustCompile(`^\[(\d+)\]\s+"[HSR]-(.+)"\[(\d+)\]\[ext (\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 2, 3, 6},
		{regexp.MustCompile(`^\[(\d+)\]\[ext (\d+)\]\s+"[HSR]-(.+)"\[(\d+)\]\[ext (\d+)\](\(.+\))?\s+#.*"(.*)"\.* lid (\d+).*`), 1, 3, 4, 7},
	}
	fnuRoute = regexp.MustCompile(`\w+\s+(\d+)\s+:\s+\(Channel Adapter.*:\s+'(.*)'\)`)
)

// linkEnd is one get_link_ends record.
type linkEnd struct{ guid, port, desc string }

// FindNodesUsingRun discovers the fabric and answers for o.
func FindNodesUsingRun(ctx context.Context, e *Env, o FindNodesUsingOptions) (*FindNodesUsing, error) {
	d, err := e.Discover(ctx)
	if err != nil {
		return nil, err
	}
	var topoText bytes.Buffer
	if err := topo.WriteIBNetDiscover(&topoText, d.Fabric, &topo.WriteOptions{Grouping: true}); err != nil {
		return nil, err
	}
	r := &FindNodesUsing{Target: FormatGUID(o.Switch), Port: o.Port, Out: []string{}, In: []string{}}
	ends := fnuLinkEnds(topoText.String())
	if !r.findSwitch(topoText.String()) {
		return r, nil
	}
	end, ok := ends[r.SwitchGUID][o.Port]
	if ok {
		r.RemoteGUID, r.RemotePort, r.RemoteDesc = end.guid, end.port, end.desc
	}
	if r.outWords, err = e.hostsRouted(ctx, r.SwitchGUID, o.Port); err != nil {
		return nil, err
	}
	if r.inWords, err = e.hostsRouted(ctx, r.RemoteGUID, r.RemotePort); err != nil {
		return nil, err
	}
	empty := func(s string) bool { return s == "" }
	r.Out = slices.DeleteFunc(slices.Clone(r.outWords), empty)
	r.In = slices.DeleteFunc(slices.Clone(r.inWords), empty)
	return r, nil
}

// findSwitch is the script's main loop: the first switch line whose GUID
// is the target or whose text matches it.
func (r *FindNodesUsing) findSwitch(text string) bool {
	re, err := regexp.Compile(`.*` + r.Target + `\s+.*`)
	for _, line := range strings.Split(text, "\n") {
		m := fnuSwitchMain.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if "0x"+m[1] == r.Target || (err == nil && re.MatchString(m[2])) {
			r.Found, r.SwitchGUID, r.Desc = true, "0x"+m[1], m[2]
			return true
		}
	}
	return false
}

// fnuLinkEnds is get_link_ends: by switch GUID ("0x..."), by local port
// as written, the remote end.
func fnuLinkEnds(text string) map[string]map[string]linkEnd {
	ends := map[string]map[string]linkEnd{}
	inSwitch, guid := false, ""
	for _, line := range strings.Split(text, "\n") {
		if m := fnuSwitchEnds.FindStringSubmatch(line); m != nil {
			guid, inSwitch = m[1], true
		}
		if inSwitch {
			var rec *linkEnd
			loc := ""
			for _, p := range fnuPorts {
				if m := p.re.FindStringSubmatch(line); m != nil {
					loc = m[p.loc]
					rec = &linkEnd{guid: "0x" + m[p.guid], port: m[p.port], desc: m[p.desc]}
				}
			}
			if rec != nil {
				if ends["0x"+guid] == nil {
					ends["0x"+guid] = map[string]linkEnd{}
				}
				ends["0x"+guid][loc] = *rec
			}
		}
		if strings.HasPrefix(line, "Ca") || strings.HasPrefix(line, "Rt") {
			inSwitch = false
		}
	}
	return ends
}

// hostsRouted is get_hosts_routed then compress_hostlist: the CAs of
// `ibroute -G guid`'s lines whose port is port (compared as numbers); no
// hosts when the GUID is empty or ibroute fails (a CA, a GUID no port
// has), as the script sees an empty output.
func (e *Env) hostsRouted(ctx context.Context, guid, port string) ([]string, error) {
	hosts := []string{}
	if guid == "" {
		return compressHosts(hosts), nil
	}
	plain := &Env{Session: e.Session}
	a, err := plain.Resolve(ctx, AddrGUID, guid)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return compressHosts(hosts), nil
	}
	ft, err := IBRoute(ctx, plain, a.Target, LIDAddress(a.Target.LID), nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return compressHosts(hosts), nil
	}
	var text bytes.Buffer
	if err := WriteIBRoute(&text, ft); err != nil {
		return nil, err
	}
	want := perlNum(port)
	for _, line := range strings.Split(text.String(), "\n") {
		if m := fnuRoute.FindStringSubmatch(line); m != nil && perlNum(m[1]) == want {
			hosts = append(hosts, m[2])
		}
	}
	return compressHosts(hosts), nil
}

// perlNum is the number Perl reads from s: its leading decimal digits
// (after spaces and a sign), 0 without.
func perlNum(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\r\f")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
		end++
	}
	v, _ := strconv.ParseFloat(s[:end], 64)
	return v
}

// compressHosts is the script's compress_hostlist of (undef, hosts...),
// split at commas: names grouped by the text before their trailing
// digits (groups in string order, the undef's "" first), each group's
// names sorted by those digits' value (stable) and runs of consecutive
// numbers written "first-last".
func compressHosts(hosts []string) []string {
	type item struct{ prefix, num string }
	items := []item{{"", ""}} // the script's @hosts starts as (undef)
	for _, h := range hosts {
		i := len(h)
		for i > 0 && h[i-1] >= '0' && h[i-1] <= '9' {
			i--
		}
		items = append(items, item{h[:i], h[i:]})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(perlNum(a.num), perlNum(b.num)) })
	ranges := map[string][][]string{}
	for _, it := range items {
		rs := ranges[it.prefix]
		last := 0.0 // an empty range's last element: undef, 0
		if n := len(rs); n > 0 {
			last = perlNum(rs[n-1][len(rs[n-1])-1])
		}
		if len(rs) > 0 && last == perlNum(it.num)-1 || len(rs) == 0 && perlNum(it.num) == 1 {
			if len(rs) == 0 {
				rs = append(rs, nil)
			}
			rs[len(rs)-1] = append(rs[len(rs)-1], it.num)
		} else {
			rs = append(rs, []string{it.num})
		}
		ranges[it.prefix] = rs
	}
	keys := make([]string, 0, len(ranges))
	for k := range ranges {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var list []string
	for _, k := range keys {
		for _, r := range ranges[k] {
			if len(r) > 1 {
				list = append(list, k+r[0]+"-"+r[len(r)-1])
			} else {
				list = append(list, k+r[0])
			}
		}
	}
	// "@list" joined by commas, then split at them: Perl's split drops
	// the trailing empty fields.
	out := strings.Split(strings.Join(list, ","), ",")
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// WriteFindNodesUsing writes the script's output: the two directions'
// headers and host lists. Not found writes its two lines.
func WriteFindNodesUsing(w io.Writer, r *FindNodesUsing) error {
	bw := bufio.NewWriter(w)
	if !r.Found {
		fmt.Fprintf(bw, "Switch \"%s\" not found\n   Try running with the \"-R\" or \"-P\" option.\n", r.Target)
		return bw.Flush()
	}
	fmt.Fprintf(bw, "%s %s (%s)  ==>>  %s %s (%s)\n", r.SwitchGUID, r.Port, r.Desc, r.RemoteGUID, r.RemotePort, r.RemoteDesc)
	fmt.Fprintf(bw, "%s\n\n", strings.Join(r.outWords, " "))
	fmt.Fprintf(bw, "%s %s (%s)  <<==  %s %s (%s)\n", r.SwitchGUID, r.Port, r.Desc, r.RemoteGUID, r.RemotePort, r.RemoteDesc)
	fmt.Fprintf(bw, "%s\n", strings.Join(r.inWords, " "))
	return bw.Flush()
}
