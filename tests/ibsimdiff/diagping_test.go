package ibsimdiff

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/ibsim"
)

// pingTimes are the parts of ibping's text that are timings.
var pingTimes = regexp.MustCompile(`\d+\.\d{3}( ms|/)|time \d+ ms`)

func untimed(s string) string { return pingTimes.ReplaceAllString(s, "T$1") }

// TestIBPingServerMatchesC: diag's ibping -S (on a Session attached with
// issm, as ibsim forwards QP1 requests only to those) answers the C
// ibping, and diag's client pinging it prints what the C client prints,
// timings aside: pongs, statistics, -f; -o 0 sends OUI 0, which the
// server (the OpenIB OUI's) leaves unanswered for both, and -o 0x1001405
// the OpenIB OUI (the MAD's OUI is 24 bits).
func TestIBPingServerMatchesC(t *testing.T) {
	s := shared.Get(t, topo2sw, nil)
	srvSess, _ := session(t, s, "Hca3", &ibsim.Options{ISSM: true}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan uint64, 1)
	go func() {
		n, err := diag.IBPingServe(ctx, &diag.Env{Session: srvSess}, diag.PingOUI, "diag-pong.example")
		if err != nil {
			t.Error(err)
		}
		served <- n
	}()
	lid := srvSess.Port().LID
	ls := strconv.Itoa(int(lid))
	sess, _ := session(t, s, "Hca1", nil, nil)
	env := &diag.Env{Session: sess}
	fast, _ := session(t, s, "Hca1", nil, &engine.Options{Timeout: 100 * time.Millisecond, Retries: 3})
	for _, c := range []struct {
		args []string
		o    diag.IBPingOptions
	}{
		{[]string{"-f", "-c", "3", ls}, diag.IBPingOptions{Target: engine.LID(lid), Count: 3, Flood: true, OUI: diag.PingOUI}},
		{[]string{"-c", "2", ls}, diag.IBPingOptions{Target: engine.LID(lid), Count: 2, Interval: time.Second, OUI: diag.PingOUI}},
		{[]string{"-f", "-c", "2", "-o", "0x1001405", ls}, diag.IBPingOptions{Target: engine.LID(lid), Count: 2, Flood: true, OUI: 0x1001405}},
		{[]string{"-f", "-c", "2", "-t", "100", "-o", "0", ls}, diag.IBPingOptions{Target: engine.LID(lid), Count: 2, Flood: true}},
	} {
		what := "ibping " + strings.Join(c.args, " ")
		var cOut []byte
		var cCode int
		// The server's agent may need a moment: the C client is retried
		// until it gets its pongs, with a deadline.
		for deadline := time.Now().Add(20 * time.Second); ; {
			cOut, cCode = cRun(t, s, "Hca1", "ibping", c.args...)
			if c.o.OUI == 0 || bytes.Contains(cOut, []byte(" 0% packet loss")) || time.Now().After(deadline) {
				break
			}
		}
		if c.o.OUI == 0 {
			diffIBPing(t, what, &diag.Env{Session: fast}, c.o, cOut, cCode)
			if !bytes.Contains(cOut, []byte(" 100% packet loss")) {
				t.Errorf("%s: the C client got an answer from a server of the OpenIB OUI:\n%s", what, cOut)
			}
			continue
		}
		out := diffIBPing(t, what, env, c.o, cOut, cCode)
		if !strings.Contains(out, "--- diag-pong.example (Lid "+ls+") ibping statistics ---") {
			t.Errorf("%s: diag's statistics do not name the server:\n%s", what, out)
		}
	}
	cancel()
	if n := <-served; n < 10 {
		t.Errorf("diag's server answered %d pings, want at least 10 (5 C, 5 diag)", n)
	}
}

// TestIBPingClientMatchesC: diag's client pings the C ibping -S and
// prints what the C client prints (timings aside); a LID nobody answers
// is 100% loss for both, with status 0.
func TestIBPingClientMatchesC(t *testing.T) {
	ibsimTest := privateSM(t, topo2sw)
	ibsimTest.StopSM()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	ibpingServer(t, ctx, ibsimTest, "Hca3")
	sess, _ := session(t, ibsimTest, "Hca2", nil, nil)
	lid := portLID(t, sess, "Hca3")
	ls := strconv.Itoa(int(lid))
	env := &diag.Env{Session: sess}
	for _, c := range []struct {
		args []string
		o    diag.IBPingOptions
	}{
		{[]string{"-c", "2", ls}, diag.IBPingOptions{Target: engine.LID(lid), Count: 2, OUI: diag.PingOUI}},
		{[]string{"-c", "0", ls}, diag.IBPingOptions{Target: engine.LID(lid), Count: 0, OUI: diag.PingOUI}}, // the statistics alone
		{[]string{"-f", "-c", "4", ls}, diag.IBPingOptions{Target: engine.LID(lid), Count: 4, Flood: true, OUI: diag.PingOUI}},
		{[]string{"-f", "-c", "2", "-t", "100", "999"}, diag.IBPingOptions{Target: engine.LID(999), Count: 2, Flood: true, OUI: diag.PingOUI}},
	} {
		what := "ibping " + strings.Join(c.args, " ")
		var cOut []byte
		var cCode int
		for deadline := time.Now().Add(20 * time.Second); ; {
			cOut, cCode = cRun(t, ibsimTest, "Hca2", "ibping", c.args...)
			if c.args[len(c.args)-1] == "999" || c.o.Count == 0 || bytes.Contains(cOut, []byte(" 0% packet loss")) || time.Now().After(deadline) {
				break
			}
		}
		e := env
		if c.args[len(c.args)-1] == "999" {
			fast, _ := session(t, ibsimTest, "Hca2", nil, &engine.Options{Timeout: 100 * time.Millisecond, Retries: 3})
			e = &diag.Env{Session: fast}
		}
		diffIBPing(t, what, e, c.o, cOut, cCode)
	}
}

// diffIBPing runs diag's ibping client with o and compares its exit
// status and its text, timings aside, with the C client's; it returns
// diag's text.
func diffIBPing(t *testing.T, what string, env *diag.Env, o diag.IBPingOptions, cOut []byte, cCode int) string {
	t.Helper()
	var b strings.Builder
	var err error
	for try := 1; ; try++ {
		r, rerr := diag.IBPingRun(t.Context(), env, o)
		b.Reset()
		if r != nil {
			diag.WriteIBPing(&b, r, false)
		}
		err = rerr
		// The C client was asked until none of its pings was lost; a
		// ping of diag's lost on a loaded machine (no pong within its
		// tries) is the load's when diag pings again and loses none.
		if try == loadTries || !bytes.Contains(cOut, []byte(" 0% packet loss")) ||
			cCode == diagStatus(err) && untimed(string(cOut)) == untimed(b.String()) {
			break
		}
		t.Logf("%s: diag differs from the C client, which lost no ping: diag pings again (try %d of %d)", what, try+1, loadTries)
	}
	if cCode != diagStatus(err) {
		t.Errorf("%s: exit status C %d, diag %v", what, cCode, err)
	}
	if d := cmp.Diff(untimed(string(cOut)), untimed(b.String())); d != "" {
		t.Errorf("%s: stdout differs, timings aside (-C +diag):\n%s", what, d)
	}
	return b.String()
}
