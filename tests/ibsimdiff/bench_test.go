package ibsimdiff

import (
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/ibsim"
)

// BenchmarkDiscoverIbsim500: engine discovery of fattree-500 through ibsim
// (from the first node, as ibnetdiscover in BenchmarkIBNetDiscover500).
func BenchmarkDiscoverIbsim500(b *testing.B) {
	s := shared.Get(b, topoFat500, nil)
	sess := benchSession(b, s.Sock, "")
	var mads int
	for b.Loop() {
		d, err := sess.Discover(b.Context(), nil)
		if err != nil || len(d.Errors) > 0 {
			b.Fatal(err, d.Errors)
		}
		mads = d.MADs
	}
	b.ReportMetric(float64(mads), "SMPs/op")
}

// BenchmarkIBNetDiscover500: the ibnetdiscover process (under umad2sim) on
// the same fabric, start-up included.
func BenchmarkIBNetDiscover500(b *testing.B) {
	s := shared.Get(b, topoFat500, nil)
	for b.Loop() {
		if _, err := s.Run(b.Context(), "", "ibnetdiscover"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSMPRoundTripIbsim: one LID-routed NodeInfo through ibsim.
func BenchmarkSMPRoundTripIbsim(b *testing.B) {
	s := shared.Get(b, topo2sw, nil)
	sess := benchSession(b, s.Sock, "Hca1")
	for b.Loop() {
		if _, err := sess.NodeInfo(b.Context(), engine.LID(1)); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSession(b *testing.B, sock, node string) *engine.Session {
	b.Helper()
	tr, err := ibsim.Open(b.Context(), sock, &ibsim.Options{Node: node})
	if err != nil {
		b.Fatal(err)
	}
	sess, err := engine.New(tr, &engine.Options{Timeout: time.Second})
	if err != nil {
		tr.Close()
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })
	return sess
}

// BenchmarkDiagIbsim2000: iblinkinfo's and ibqueryerrors' data through
// ibsim on fattree-2000, in this process (diag.LinkinfoOf,
// diag.QueryErrorsOf on one session) and as the ibscript process; the
// C tools' figures are bench/compare.sh's.
func BenchmarkDiagIbsim2000(b *testing.B) {
	s := shared.Get(b, "../topologies/fattree-2000.net", nil)
	sess := benchSession(b, s.Sock, "h000-00")
	env := &diag.Env{Session: sess}
	b.Run("linkinfo", func(b *testing.B) {
		for b.Loop() {
			if _, err := diag.LinkinfoOf(b.Context(), env, diag.LinkinfoOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("queryerrors", func(b *testing.B) {
		for b.Loop() {
			if _, err := diag.QueryErrorsOf(b.Context(), env, diag.QueryErrorsOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("queryerrors-new-session", func(b *testing.B) {
		for b.Loop() {
			fresh := benchSession(b, s.Sock, "h000-00")
			if _, err := diag.QueryErrorsOf(b.Context(), &diag.Env{Session: fresh}, diag.QueryErrorsOptions{}); err != nil {
				b.Fatal(err)
			}
			fresh.Close()
		}
	})
	for _, tool := range []string{"iblinkinfo", "ibqueryerrors"} {
		b.Run(tool+"-process", func(b *testing.B) {
			bin := ibscriptBinary(b)
			for b.Loop() {
				cmd := exec.CommandContext(b.Context(), bin, tool, "--fabric", "ibsim:"+s.Sock+"?node=h000-00")
				if out, err := cmd.CombinedOutput(); err != nil {
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.ExitCode() != 1 {
						b.Fatalf("%v: %s", err, out)
					}
				}
			}
		})
	}
}
