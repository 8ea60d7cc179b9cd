package diag

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// ibidsverify (infiniband-diags' ibidsverify.pl): LIDs and GUIDs checked
// for zero and duplicates. The script reads `ibnetdiscover -g`'s text (its
// cache file, remade with -R or when missing); this reads the same text,
// made by the same writer from one discovery (always fresh: ibscript keeps
// no cache, so -R changes nothing), line by line with the script's
// regular expressions and its string comparisons, so what it prints and
// misses is the script's: a zero GUID is never caught (the script
// compares the text "0x0000000000000000" with 0), a CA's ports each insert
// their LID, and a port GUID equal to another node's GUID is reported.

// IBIDsVerifyOptions are ibidsverify's: -R (recalculate) is accepted.
type IBIDsVerifyOptions struct {
	Recalculate bool `flag:"R," help:"Recalculate ibnetdiscover information (ibscript always discovers)" lua:"recalculate"`
}

// ibIDsVerifyTool is ibidsverify.
var ibIDsVerifyTool = NewTool(Tool{
	Name:    "ibidsverify",
	Lua:     "ibidsverify",
	Summary: "check the fabric's LIDs and GUIDs for zero and duplicates (ibidsverify.pl)",
	Args:    "",
	// getopts("hRC:P:"): the script takes -h -R -C -P only.
	Exclude:      "z,G,D,L,s,t,y,e,v,d,V",
	Script:       ibIDsVerifyUsage,
	ScriptStatus: 2,
	Getopts:      "hRC:P:",
	Example:      []string{},
	LuaDoc: `ibidsverify({recalculate}) -> {lids, node_guids, port_guids, problems = {...}}: ` +
		`the fabric's LIDs and GUIDs checked for zero and duplicates as ibidsverify prints them (problems: its lines; none on a sound fabric)`,
	LuaExample: `local v = diag.ibidsverify()
print(v.lids, v.node_guids, v.port_guids, #v.problems)`,
}, IBIDsVerifyOptions{}, IBIDsVerifyRun, WriteIBIDsVerify)

// ibIDsVerifyUsage is the script's usage_and_exit text (stdout, 2).
const ibIDsVerifyUsage = `Usage: ibidsverify [-Rh]
   Validate LIDs and GUIDs (check for zero and duplicates) in the local subnet
   -h This help message
   -R Recalculate ibnetdiscover information (Default is to reuse ibnetdiscover output)
   -C <ca_name> use selected Channel Adaptor name for queries
   -P <ca_port> use selected channel adaptor port for queries
`

// IBIDsVerify is what ibidsverify found: how many LIDs, node GUIDs and
// port GUIDs it took in, and its lines for the zero and duplicate ones.
type IBIDsVerify struct {
	LIDs      int      `json:"lids"`
	NodeGUIDs int      `json:"node_guids"`
	PortGUIDs int      `json:"port_guids"`
	Problems  []string `json:"problems"`
}

// CheckFailed ends a tool whose data say the fabric failed its check
// (ibidsverify's duplicates): the data are printed and the exit status
// is 1; Lua gets the data.
type CheckFailed struct{ Msg string }

func (e *CheckFailed) Error() string { return e.Msg }

// WriteIBIDsVerify prints the script's lines.
func WriteIBIDsVerify(w io.Writer, r *IBIDsVerify) error {
	for _, p := range r.Problems {
		if _, err := fmt.Fprintln(w, p); err != nil {
			return err
		}
	}
	return nil
}

// The script's patterns, in its order.
var (
	idsCAGUID      = regexp.MustCompile(`^caguid=(.*)`)
	idsRtGUID      = regexp.MustCompile(`^rtguid=(.*)`)
	idsSwGUID      = regexp.MustCompile(`^switchguid=(.*)`)
	idsSwPortGUID  = regexp.MustCompile(`^switchguid=(.*)\((.*)\)`)
	idsSwitch      = regexp.MustCompile(`^Switch.*"S-(.*)"\s+# (.*) port.* lid (\d+) .*`)
	idsCA          = regexp.MustCompile(`^Ca.*`)
	idsRt          = regexp.MustCompile(`^Rt.*`)
	idsPeerLIDs    = []*regexp.Regexp{regexp.MustCompile(`"S-(.*)# lid (\d+) .*`), regexp.MustCompile(`^.*"H-(.*)# lid (\d+) .*`), regexp.MustCompile(`^.*"R-(.*)# lid (\d+) .*`)}
	idsCAPortGUIDs = regexp.MustCompile(`^\[(\d+)\]\((.*)\)`)
)

// idsVerifier is the script's state: its three hashes and status.
type idsVerifier struct {
	lids, nodeGUIDs, portGUIDs map[string]string // key -> the LID or node GUID the script prints
	r                          *IBIDsVerify
	code                       int
}

func (v *idsVerifier) say(format string, args ...any) {
	v.r.Problems = append(v.r.Problems, fmt.Sprintf(format, args...))
}

// zeroLID is validate_non_zero_lid ($lid eq 0: the text "0").
func (v *idsVerifier) zeroLID(lid, nodeGUID, nodeType string) bool {
	if lid == "0" {
		v.say("LID 0 found for %s NodeGUID %s", nodeType, nodeGUID)
		return true
	}
	return false
}

// zeroGUID is validate_non_zero_guid ($guid eq 0x0: the text "0").
func (v *idsVerifier) zeroGUID(lid, guid, nodeType string) bool {
	if guid == "0" {
		v.say("%s GUID 0x0 found with LID %s", nodeType, lid)
		return true
	}
	return false
}

// insert is the script's insert_lid, insert_nodeguid and
// insert_portguid: a zero value (already said) fails; a key met before
// is said with dup (the key and what it was recorded with); else the
// key is recorded with val.
func (v *idsVerifier) insert(m map[string]string, key, val string, zero bool, dup string) bool {
	if zero {
		v.code = 1
		return false
	}
	if old, ok := m[key]; ok {
		v.say(dup, key, old)
		v.code = 1
		return false
	}
	m[key] = val
	return true
}

func (v *idsVerifier) insertLID(lid, nodeGUID, nodeType string) {
	v.insert(v.lids, lid, nodeGUID, v.zeroLID(lid, nodeGUID, nodeType), "LID %s already defined for NodeGUID %s")
}

func (v *idsVerifier) insertNodeGUID(lid, nodeGUID, nodeType string) {
	v.insert(v.nodeGUIDs, nodeGUID, lid, v.zeroGUID(lid, nodeGUID, nodeType), "NodeGUID %s already defined for LID %s")
}

// insertPortGUID is insert_portguid, then validate_portguid: a port GUID
// that is another node's GUID.
func (v *idsVerifier) insertPortGUID(lid, portGUID, nodeType, nodeGUID string) {
	if !v.insert(v.portGUIDs, portGUID, lid, v.zeroGUID(lid, portGUID, nodeType), "PortGUID %s already defined for LID %s") {
		return
	}
	if _, ok := v.nodeGUIDs[portGUID]; nodeGUID != portGUID && ok {
		v.say("PortGUID %s is an invalid duplicate of a NodeGUID", portGUID)
		v.code = 1
	}
}

// VerifyIDs runs the script's main loop over ibnetdiscover -g's text.
func VerifyIDs(text string) (*IBIDsVerify, int) {
	v := &idsVerifier{lids: map[string]string{}, nodeGUIDs: map[string]string{}, portGUIDs: map[string]string{}, r: &IBIDsVerify{Problems: []string{}}}
	var nodeType, nodeGUID, portGUID, lid, firstPort string
	for _, line := range strings.SplitAfter(text, "\n") {
		line = strings.TrimSuffix(line, "\n") // Perl's . never matches it
		if m := idsCAGUID.FindStringSubmatch(line); m != nil {
			nodeGUID, nodeType = m[1], ""
		} else if m := idsRtGUID.FindStringSubmatch(line); m != nil {
			nodeGUID, nodeType = m[1], ""
		}
		if m := idsSwGUID.FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID, nodeType = m[1], "", ""
		}
		if m := idsSwPortGUID.FindStringSubmatch(line); m != nil {
			nodeGUID, portGUID = m[1], "0x"+m[2]
		}
		if m := idsSwitch.FindStringSubmatch(line); m != nil {
			nodeType, firstPort, lid = "switch", "yes", m[3]
			v.insertLID(lid, nodeGUID, nodeType)
			v.insertNodeGUID(lid, nodeGUID, nodeType)
			if portGUID != "" {
				v.insertPortGUID(lid, portGUID, nodeType, nodeGUID)
			}
		}
		if idsCA.MatchString(line) {
			nodeType, firstPort = "ca", "yes"
		}
		if idsRt.MatchString(line) {
			nodeType, firstPort = "router", "yes"
		}
		if nodeType != "ca" && nodeType != "router" {
			continue
		}
		for _, re := range idsPeerLIDs {
			if m := re.FindStringSubmatch(line); m != nil {
				lid = m[2]
				v.insertLID(lid, nodeGUID, nodeType)
				if firstPort == "yes" {
					v.insertNodeGUID(lid, nodeGUID, nodeType)
					firstPort = "no"
				}
			}
		}
		if m := idsCAPortGUIDs.FindStringSubmatch(line); m != nil {
			portGUID = "0x" + m[2]
			v.insertPortGUID(lid, portGUID, nodeType, nodeGUID)
		}
	}
	v.r.LIDs, v.r.NodeGUIDs, v.r.PortGUIDs = len(v.lids), len(v.nodeGUIDs), len(v.portGUIDs)
	return v.r, v.code
}

// IBIDsVerifyRun discovers the fabric and checks its ibnetdiscover -g
// text as the script does; a fault found is a *CheckFailed with the data.
func IBIDsVerifyRun(ctx context.Context, env *Env, o IBIDsVerifyOptions) (*IBIDsVerify, error) {
	d, err := env.Discover(ctx)
	if err != nil {
		return nil, err
	}
	var text bytes.Buffer
	if err := topo.WriteIBNetDiscover(&text, d.Fabric, &topo.WriteOptions{Grouping: true}); err != nil {
		return nil, err
	}
	r, code := VerifyIDs(text.String())
	if code != 0 {
		return r, &CheckFailed{Msg: fmt.Sprintf("ibidsverify: %d LID or GUID problems", len(r.Problems))}
	}
	return r, nil
}
