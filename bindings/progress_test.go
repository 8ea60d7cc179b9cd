package bindings

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
)

// progressRecorder collects Options.Progress calls (discovery makes them
// from the engine's goroutine).
type progressRecorder struct {
	mu    sync.Mutex
	calls []string
}

func (p *progressRecorder) record(done, total int, what string) {
	p.mu.Lock()
	p.calls = append(p.calls, fmt.Sprintf("%s %d/%d", what, done, total))
	p.mu.Unlock()
}

func progressState(t *testing.T, p *progressRecorder, names map[uint64]string) *Env {
	t.Helper()
	_, env, _ := newTestStateOpts(t, &Options{Progress: p.record, NodeNames: names})
	return env
}

// TestSleepProgress: plan.sleep over a second shows the seconds gone by,
// from 0 to the whole wait.
func TestSleepProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p progressRecorder
		env := progressState(t, &p, nil)
		if err := env.L.DoString(`plan.sleep(3)`); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.calls) < 3 || p.calls[0] != "plan.sleep: seconds 0/3" || p.calls[len(p.calls)-1] != "plan.sleep: seconds 3/3" {
			t.Errorf("calls %q", p.calls)
		}
	})
}

// TestDiscoverProgressAndNames: fabric.discover reports the nodes found
// as it goes, and a node-name-map names the nodes it finds.
func TestDiscoverProgressAndNames(t *testing.T) {
	var p progressRecorder
	env := progressState(t, &p, map[uint64]string{0x0002c90300a00000: "rack1-node001"})
	if err := env.L.DoString(`
		local f = fabric.discover()
		local named
		for _, n in ipairs(f.nodes) do if n.guid == "0x0002c90300a00000" then named = n end end
		assert(named and named.desc == "rack1-node001", "desc " .. tostring(named and named.desc))
		assert(named.ports[1].node.desc == "rack1-node001")`); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) == 0 || p.calls[0][:len("fabric.discover: nodes found")] != "fabric.discover: nodes found" {
		t.Errorf("calls %q", p.calls)
	}
}
