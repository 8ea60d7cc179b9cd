package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// Faults are the faults SetFaults injects into a simulated fabric. The
// zero value injects none.
//
// Every decision is drawn from a generator seeded by Seed, the request's
// bytes without its TID, and how many times the same request was sent
// before (a retransmission is a new draw): the same Seed and the same
// requests replay the same faults, whatever order concurrent senders'
// MADs reach the fabric in.
type Faults struct {
	Seed uint64
	// Loss is the probability that a request is lost on its way, and
	// again that its response is lost on the way back. Each MAD the SA
	// sends of its own (RMPP segments, STOP, ABORT) is lost with the
	// same probability.
	Loss float64
	// Duplicate is the probability that a response, or a MAD the SA
	// sends of its own, is delivered twice.
	Duplicate float64
	// Reorder is the probability that a response is held back and
	// delivered after the response of the next request sent on the
	// fabric, which overtakes it (when that one is held back too, it
	// takes its place: a response waits for one more request at most);
	// with no next request it arrives when the sender retransmits. A
	// MAD the SA sends of its own is held back behind the next one it
	// sends.
	Reorder float64
	// Corrupt is the probability that one byte of a response, anywhere
	// in the MAD, is replaced with a random value.
	Corrupt float64
	// Delay holds back the MAD a request results in (its response, or
	// the request itself when an agent is its destination) this long
	// before it is delivered; a response later than the sender's
	// timeout makes it retransmit. With Jitter, each MAD's delay is
	// drawn evenly from Delay-Jitter to Delay+Jitter (never below
	// zero). Reordered responses and an SA table's RMPP segments after
	// the first are not delayed.
	Delay, Jitter time.Duration
	// DeadNodes are nodes (id or description) that stop answering:
	// every MAD that reaches one is dropped, so a dead switch forwards
	// nothing either.
	DeadNodes []string
	// MutePortInfo are ports whose SMA does not answer a PortInfo Get
	// for them, while their node answers everything else: discovery
	// reads the node but never the port, as when a port's PortInfo times
	// out (libibnetdisc keeps such a port as a shell, out of its port
	// table; rdma-core #1767).
	MutePortInfo []PortRef
	// Climb makes performance counters grow by Step with every MAD sent
	// into the fabric.
	Climb []Climb
}

// PortRef names a port: its node (id or description) and number.
type PortRef struct {
	Node string
	Port int
}

// Climb is a counter that grows during a run; see Faults.Climb. Counter
// is a name as for SetCounter.
type Climb struct {
	Node    string
	Port    int
	Counter string
	Step    uint64
}

// injector is the active Faults; f.mu guards it.
type injector struct {
	Faults
	dead  map[*node]bool
	mute  map[*port]bool // MutePortInfo
	climb []climbAt
	seen  map[uint64]uint32 // request key -> times sent
	held  []heldMAD         // responses held back (Reorder)
	stats FaultStats
}

type climbAt struct {
	p       *port
	pc, pce int // counter indexes, -1 when not in that attribute
	step    uint64
}

type heldMAD struct {
	to  receiver
	out fabric.Packet
}

// FaultStats counts the faults injected since SetFaults.
type FaultStats struct {
	Requests, LostRequests, LostResponses, Duplicated, Reordered, Corrupted, DeadDrops, Delayed uint64
}

// SetFaults replaces the faults injected into the fabric; the zero
// Faults turns injection off (and delivers responses still held back).
// MADs a Delay holds back arrive when due whatever SetFaults says later;
// Close drops them.
// It checks the probabilities and node names before changing anything.
func (f *Fabric) SetFaults(fl Faults) error {
	for _, p := range []struct {
		name string
		v    float64
	}{{"loss", fl.Loss}, {"duplicate", fl.Duplicate}, {"reorder", fl.Reorder}, {"corrupt", fl.Corrupt}} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("sim: set faults: %s %v: not a probability", p.name, p.v)
		}
	}
	if fl.Delay < 0 || fl.Jitter < 0 {
		return fmt.Errorf("sim: set faults: delay %v jitter %v: negative", fl.Delay, fl.Jitter)
	}
	f.mu.Lock()
	in := &injector{Faults: fl, dead: map[*node]bool{}, mute: map[*port]bool{}, seen: map[uint64]uint32{}}
	for _, id := range fl.DeadNodes {
		n := f.lookup(id)
		if n == nil {
			f.mu.Unlock()
			return fmt.Errorf("sim: set faults: dead node %q: no such node", id)
		}
		in.dead[n] = true
	}
	for _, m := range fl.MutePortInfo {
		p, err := f.portLocked("set faults: mute PortInfo", m.Node, m.Port, true)
		if err != nil {
			f.mu.Unlock()
			return err
		}
		in.mute[p] = true
	}
	for _, c := range fl.Climb {
		p, err := f.portLocked("set faults: climb", c.Node, c.Port, true)
		if err != nil {
			f.mu.Unlock()
			return err
		}
		i, j := counterIndex(pcNames[:], c.Counter), counterIndex(pceNames[:], c.Counter)
		if i < 0 && j < 0 {
			f.mu.Unlock()
			return fmt.Errorf("sim: set faults: climb %q: unknown counter", c.Counter)
		}
		in.climb = append(in.climb, climbAt{p: p, pc: i, pce: j, step: c.Step})
	}
	var held []heldMAD
	if f.inj != nil {
		held = f.inj.held
	}
	if fl.Loss == 0 && fl.Duplicate == 0 && fl.Reorder == 0 && fl.Corrupt == 0 &&
		fl.Delay == 0 && fl.Jitter == 0 && len(in.dead) == 0 && len(in.climb) == 0 && len(in.mute) == 0 {
		f.inj = nil // the fast path again
	} else {
		f.inj = in
	}
	f.corrupts.Store(fl.Corrupt > 0)
	f.mu.Unlock()
	for i := range held {
		held[i].to.Deliver(&held[i].out)
	}
	return nil
}

// FaultStats returns what the injector did since the last SetFaults.
func (f *Fabric) FaultStats() FaultStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inj == nil {
		return FaultStats{}
	}
	return f.inj.stats
}

// deadDrop reports whether a MAD arriving at node n is dropped because n
// is dead. f.mu is held.
func (f *Fabric) deadDrop(n *node) bool {
	if f.inj.dead[n] {
		f.inj.stats.DeadDrops++
		return true
	}
	return false
}

// mutedPortInfo reports whether node n's SMA leaves a PortInfo Get of
// attribute modifier mod, arriving by port in, unanswered
// (Faults.MutePortInfo). f.mu is held.
func (f *Fabric) mutedPortInfo(n *node, in *port, mod uint32) bool {
	if len(f.inj.mute) == 0 {
		return false
	}
	p := in
	if int(mod) < len(n.ports) && (mod != 0 || n.typ == typeSwitch) {
		p = n.ports[mod]
	}
	return f.inj.mute[p]
}

// rng returns the generator for a request: the seed, the request's bytes
// minus its TID, and how many times it was sent before.
func (in *injector) rng(b []byte) *rand.Rand {
	h := fnv.New64a()
	_, _ = h.Write(b[:8])
	_, _ = h.Write(b[16:])
	k := h.Sum64()
	n := in.seen[k]
	in.seen[k] = n + 1
	return rand.New(rand.NewPCG(in.Seed, k^uint64(n)*0x9e3779b97f4a7c15))
}

// transmitFaulty is Transmit with faults injected. f.mu is held on entry
// and released before delivering.
func (w *wire) transmitFaulty(src *port, p *fabric.Packet, t *txn) {
	f := w.f
	in := f.inj
	in.stats.Requests++
	r := in.rng(t.buf[:])
	for _, c := range in.climb {
		if c.pc >= 0 {
			c.p.pc.add(c.pc, uint32(min(c.step, 1<<32-1)))
		}
		if c.pce >= 0 {
			c.p.pc.addExt(c.pce, c.step)
		}
	}
	// Draw every decision, used or not, so one fault's outcome does not
	// shift the others'.
	lostReq, lostResp := r.Float64() < in.Loss, r.Float64() < in.Loss
	dup, hold, corrupt := r.Float64() < in.Duplicate, r.Float64() < in.Reorder, r.Float64() < in.Corrupt
	at, val := r.IntN(mad.Size), byte(r.Uint32())
	// Drawn last, and only with Jitter, so that faults without it replay
	// as they did before delays existed.
	wait := in.Delay
	if in.Jitter > 0 {
		wait += time.Duration(r.Int64N(2*int64(in.Jitter)+1)) - in.Jitter
	}
	if lostReq {
		in.stats.LostRequests++
	} else {
		f.send(src, &p.Addr, t)
	}
	to := t.to
	var release []heldMAD
	if to != nil {
		switch {
		case lostResp:
			in.stats.LostResponses++
			to = nil
		default:
			if corrupt && at < len(t.out.Data) {
				in.stats.Corrupted++
				t.out.Data[at] ^= val | 1 // always a change
			}
			if hold {
				// What was held before is overtaken now: no
				// response waits past the next one sent.
				in.stats.Reordered++
				release, in.held = in.held, []heldMAD{{to: to, out: clonePacket(&t.out)}}
				to = nil
			} else {
				release, in.held = in.held, nil
			}
			if dup {
				in.stats.Duplicated++
			}
		}
	}
	if to == nil && !hold {
		// Nothing answered (or it was lost): held responses go now, as
		// a retransmission releases them.
		release, in.held = in.held, nil
	}
	if to != nil && wait > 0 {
		in.stats.Delayed++
		f.deliverLate(wait, heldMAD{to: to, out: clonePacket(&t.out)}, dup)
		to = nil
	}
	more := f.saTake()
	f.mu.Unlock()
	if to != nil {
		to.Deliver(&t.out)
		if dup {
			to.Deliver(&t.out)
		}
	}
	for i := range release {
		release[i].to.Deliver(&release[i].out)
	}
	saFlush(more)
}

// lateMAD is a MAD Faults.Delay holds back, on its timer.
type lateMAD struct {
	f   *Fabric
	mad heldMAD
	dup bool
	t   *time.Timer
}

// deliverLate delivers m (twice with dup) after wait, unless the fabric
// is closed first. f.mu is held.
func (f *Fabric) deliverLate(wait time.Duration, m heldMAD, dup bool) {
	if f.late == nil {
		f.late = map[*lateMAD]bool{}
	}
	l := &lateMAD{f: f, mad: m, dup: dup}
	f.late[l] = true
	l.t = time.AfterFunc(wait, l.fire) // fire waits for f.mu, so l.t is set first
}

func (l *lateMAD) fire() {
	f := l.f
	f.mu.Lock()
	_, pending := f.late[l]
	delete(f.late, l)
	f.mu.Unlock()
	if !pending {
		return
	}
	l.mad.to.Deliver(&l.mad.out)
	if l.dup {
		l.mad.to.Deliver(&l.mad.out)
	}
}

// stopLate drops the MADs still held back by Faults.Delay. f.mu is held.
func (f *Fabric) stopLate() {
	for l := range f.late {
		l.t.Stop()
	}
	clear(f.late)
}

func clonePacket(p *fabric.Packet) fabric.Packet {
	c := *p
	c.Data = append([]byte(nil), p.Data...)
	return c
}

// SetLink takes the cable at a node's port down (both ends Down; the far
// end Polling, this end Disabled; LinkDownedCounter counts it at both) or
// brings it back up with the states the ends had before.
//
// Subscribers of the SA get the traps OpenSM sends (inform.go): 128 from
// each switch at the cable's ends, then 65 for each endport the SM no
// longer reaches (64 when it reaches it again).
func (f *Fabric) SetLink(node string, num int, up bool) error {
	f.mu.Lock()
	err := f.setLinkLocked(node, num, up)
	out := f.saTake()
	f.mu.Unlock()
	saFlush(out)
	return err
}

func (f *Fabric) setLinkLocked(node string, num int, up bool) error {
	p, err := f.portLocked("set link", node, num, true)
	if err != nil {
		return err
	}
	r := p.remote
	if r == nil {
		return fmt.Errorf("sim: set link %s: not cabled", p)
	}
	var before, changed []*port
	if len(f.sa.informs) > 0 {
		before, _ = f.reachBy(true)
	}
	defer func() {
		if len(changed) > 0 && len(f.sa.informs) > 0 {
			f.linkTraps(changed, before)
		}
	}()
	// What the load moved while the link was in its old state.
	f.accrueLocked(p)
	f.accrueLocked(r)
	if f.linkSaved == nil {
		f.linkSaved = map[*port][2]uint8{}
	}
	ld := counterIndex(pcNames[:], "LinkDownedCounter")
	for _, e := range [...]*port{p, r} {
		if !up {
			if _, down := f.linkSaved[e]; down {
				continue
			}
			f.linkSaved[e] = [2]uint8{e.state, e.phys}
			phys := smp.PhysStatePolling
			if e == p {
				phys = smp.PhysStateDisabled
			}
			e.update(func(pi *smp.PortInfo) { pi.PortState, pi.PortPhysicalState = smp.PortStateDown, phys })
			if ld >= 0 {
				e.pc.add(ld, 1)
			}
			changed = append(changed, e)
			continue
		}
		s, down := f.linkSaved[e]
		if !down {
			continue
		}
		delete(f.linkSaved, e)
		e.update(func(pi *smp.PortInfo) { pi.PortState, pi.PortPhysicalState = s[0], s[1] })
		changed = append(changed, e)
	}
	return nil
}

// SetLFT points a switch's linear forwarding table entry for lid at port
// out (0xFF drops), as an SM with a bug might: a misrouting fault.
func (f *Fabric) SetLFT(node string, lid uint16, out uint8) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.lookup(node)
	if n == nil || n.sw == nil {
		return fmt.Errorf("sim: set LFT %q: no such switch", node)
	}
	if int(lid) >= len(n.sw.table()) || lid > n.sw.top {
		return fmt.Errorf("sim: set LFT %q LID %d: past LinearFDBTop %d", node, lid, n.sw.top)
	}
	if out != 0xff && int(out) > n.numPorts {
		return fmt.Errorf("sim: set LFT %q LID %d: port %d out of range (%d ports)", node, lid, out, n.numPorts)
	}
	n.sw.lft[lid] = out
	return nil
}

// intact is the transports' fabric.Caps.Intact: no answer is damaged
// while the faults corrupt none.
func (f *Fabric) intact() bool { return !f.corrupts.Load() }
