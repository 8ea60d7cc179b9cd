package diag

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateSATemplates = flag.Bool("update-sa-templates", false, "rewrite testdata/sa_templates.golden")

// saTemplateCases are saquery's record queries with their selectors and
// options, the odd ones included: values wider than their field (-H 300,
// -J 0x21, --sl 20), a flow label over 8 bits, unset and all-ones
// selectors.
func saTemplateCases() []struct {
	name string
	qt   string
	a    saArgs
	o    func(*SAQueryOptions)
} {
	type tc = struct {
		name string
		qt   string
		a    saArgs
		o    func(*SAQueryOptions)
	}
	none := saArgs{p1: -1, p2: -1, toPort: -1}
	sel := func(lid uint16, p1, p2 int) saArgs { return saArgs{lid: lid, p1: p1, p2: p2, toPort: -1} }
	gid := [16]byte{0xfe, 0x80, 15: 0x12}
	var cases []tc
	for _, qt := range []string{"NodeRecord", "PortInfoRecord", "SL2VLTableRecord", "PKeyTableRecord",
		"VLArbitrationTableRecord", "LinkRecord", "LFTRecord", "MFTRecord", "GUIDInfoRecord",
		"SwitchInfoRecord", "SMInfoRecord", "InformInfoRecord", "ServiceRecord"} {
		cases = append(cases,
			tc{qt + " none", qt, none, nil},
			tc{qt + " lid", qt, sel(7, -1, -1), nil},
			tc{qt + " lid/1/2", qt, sel(7, 1, 2), nil},
			tc{qt + " /3/", qt, sel(0, 3, -1), nil},
			tc{qt + " //0x1ff", qt, sel(0, -1, 0x1ff), nil},
			tc{qt + " 5/255/65535", qt, sel(5, 255, 65535), nil},
			tc{qt + " 5/0/0", qt, sel(5, 0, 0), nil},
		)
	}
	cases = append(cases,
		tc{"LinkRecord to", "LinkRecord", saArgs{lid: 3, p1: 1, p2: -1, toLID: 9, toPort: 4, to: true}, nil},
		tc{"LinkRecord to lid only", "LinkRecord", saArgs{lid: 0, p1: -1, p2: -1, toLID: 9, toPort: -1, to: true}, nil},
		tc{"LinkRecord to port 255", "LinkRecord", saArgs{p1: -1, p2: -1, toLID: 0, toPort: 255, to: true}, nil},
		tc{"InformInfoRecord gid", "InformInfoRecord", saArgs{p1: -1, p2: -1, toPort: -1, gid: gid, hasGID: true}, nil},
	)
	for _, qt := range []string{"PathRecord", "MCMemberRecord"} {
		cases = append(cases,
			tc{qt + " defaults", qt, none, nil},
			tc{qt + " lids gids", qt, none, func(o *SAQueryOptions) {
				o.SLID, o.DLID, o.MLID = 3, 9, 0xc001
				o.SGID, o.DGID, o.GID, o.MGID = gid, [16]byte{0xfe, 0x80, 15: 0x34}, gid, [16]byte{0xff, 0x12, 0x40, 0x1b, 15: 1}
			}},
			tc{qt + " numbers", qt, none, func(o *SAQueryOptions) {
				o.Reversible, o.NumbPath, o.PKey, o.QoSClass, o.SL = 1, 4, 0xffff, 5, 3
				o.MTU, o.Rate, o.PktLife, o.QKey, o.TClass, o.FlowLabel, o.HopLimit = 0x84, 0x83, 0x92, 0x0b1b, 7, 0x12, 64
				o.Scope, o.JoinState, o.ProxyJoin, o.ServiceID = 2, 1, 1, 0x1000000000000001
			}},
			tc{qt + " wide values", qt, none, func(o *SAQueryOptions) {
				o.Reversible, o.NumbPath, o.QoSClass, o.SL, o.HopLimit = 3, 0x1ff, 0x1234, 20, 300
				o.FlowLabel, o.Scope, o.JoinState, o.ProxyJoin = 0x12345, 0x1f, 0x21, 2
			}},
			tc{qt + " zeros given", qt, none, func(o *SAQueryOptions) {
				o.Reversible, o.NumbPath, o.QoSClass, o.SL, o.HopLimit, o.ProxyJoin = 0, 0, 0, 0, 0, 0
			}},
			tc{qt + " all ones", qt, none, func(o *SAQueryOptions) {
				o.Reversible, o.NumbPath, o.SL, o.HopLimit, o.ProxyJoin = 255, 255, 0xffff, 0xffffffff, 255
				o.QoSClass = 0xfff
			}},
			tc{qt + " src-to-dst", qt, none, func(o *SAQueryOptions) { o.NumbPath = 0x7f }},
		)
	}
	return cases
}

// TestSATemplatesGolden: the templates and component masks saquery's
// record queries send are the bytes in testdata/sa_templates.golden,
// captured from the hand-built templates before they were built with
// mad/sa's typed templates.
func TestSATemplatesGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range saTemplateCases() {
		o := NewSAQueryOptions()
		if c.o != nil {
			c.o(o)
		}
		p := &saParams{o: o, slid: o.SLID, dlid: o.DLID, numbPath: o.NumbPath, sgid: o.SGID, dgid: o.DGID}
		a := c.a
		mask, tmpl := saTemplate(c.qt, &a, p)
		fmt.Fprintf(&b, "%s: mask %#x %x\n", c.name, mask, tmpl)
	}
	for _, g := range []uint64{0, 0x0002c90300000001, ^uint64(0)} {
		mask, tmpl := pathToGUIDTemplate(0xfe80000000000000, g)
		fmt.Fprintf(&b, "ibtracert -G %#x: mask %#x %x\n", g, mask, tmpl)
	}
	for _, c := range []uint32{0x2, 0x400} {
		mask, tmpl := isSMTemplate(c)
		fmt.Fprintf(&b, "saquery -s %#x: mask %#x %x\n", c, mask, tmpl)
	}
	checkGolden(t, filepath.Join("testdata", "sa_templates.golden"), b.String(), *updateSATemplates)
}

// checkGolden compares got with the golden file (rewritten first with
// update) and names the first line that differs.
func checkGolden(t *testing.T, golden, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("%s: line %d:\ngot  %q\nwant %q", golden, i+1, gl[i], wl[i])
		}
	}
	t.Fatalf("%s: %d lines, want %d", golden, len(gl), len(wl))
}
