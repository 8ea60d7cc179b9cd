package tests

import (
	"context"
	"slices"
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/sim/simtest"
)

// TestPlanarizedPathRecords: the SA takes a planarized CA's GID for its
// aggregated port (docs/planes.md): a PathRecord query from planarized
// h000-00's session (its plane-1 port) to h001-02's GID gives the path on
// plane 1; from h000-00's GID to h001-02's, one path per plane, each
// between the two plane ports of that plane.
func TestPlanarizedPathRecords(t *testing.T) {
	f := simtest.Load(t, "topologies/fattree-xdr-4planes.net", nil)
	s := simtest.Session(t, f, nil)
	lids := map[string][]uint16{}
	guid := map[string]uint64{}
	for _, n := range f.Topology().Nodes {
		for _, p := range n.Ports[1:] {
			lids[n.ID] = append(lids[n.ID], p.LID)
			guid[n.ID] = p.GUID
		}
	}
	gid := func(id string) mad.GID { return mad.NewGID(0xfe80000000000000, guid[id]) }
	query := func(sgid bool) [][2]uint16 {
		t.Helper()
		tmpl := make([]byte, sa.PathRecordLayout().Size)
		fd, cd, _ := sa.PathRecord().Field("dgid")
		fs, cs, _ := sa.PathRecord().Field("sgid")
		g := gid("h001-02")
		copy(fd.Slice(tmpl), g[:])
		mask := uint64(1) << cd
		if sgid {
			g = gid("h000-00")
			copy(fs.Slice(tmpl), g[:])
			mask |= 1 << cs
		}
		recs, err := s.SAGetTable(context.Background(), sa.PathRecord(), mask, tmpl)
		if err != nil {
			t.Fatal(err)
		}
		var got [][2]uint16
		for _, r := range recs {
			var pr sa.PathRec
			if err := pr.UnmarshalBinary(r); err != nil {
				t.Fatal(err)
			}
			got = append(got, [2]uint16{pr.SLID, pr.DLID})
		}
		slices.SortFunc(got, func(a, b [2]uint16) int { return int(a[0]) - int(b[0]) })
		return got
	}
	src, dst := lids["h000-00"], lids["h001-02"]
	if got, want := query(false), [][2]uint16{{src[0], dst[0]}}; !slices.Equal(got, want) {
		t.Errorf("to h001-02's GID: (slid, dlid) %v, want plane 1's %v", got, want)
	}
	var want [][2]uint16
	for p := range 4 {
		want = append(want, [2]uint16{src[p], dst[p]})
	}
	if got := query(true); !slices.Equal(got, want) {
		t.Errorf("h000-00's GID to h001-02's: (slid, dlid) %v, want one per plane %v", got, want)
	}
}
