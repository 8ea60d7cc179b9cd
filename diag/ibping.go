package diag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// ibping's protocol: a Get of vendor class 0x32 (OpenIB ping, vendor
// range 2), class version 1, attribute 0, with the OpenIB OUI; the server
// answers with its "host.domain" in the vendor data.
const (
	PingClass   = 0x32
	PingVersion = 1
	// PingOUI is the OpenIB OUI ibping uses unless -o says otherwise.
	PingOUI = 0x001405
	// pingData is where the vendor data starts (after the RMPP header,
	// a reserved byte and the OUI) and pingDataLen its size.
	pingData    = 40
	pingDataLen = mad.Size - pingData
)

// IBPingOptions are ibping's client options.
type IBPingOptions struct {
	Target engine.Target
	// Count is -c: stop after Count pings; 0 sends none and gives the
	// statistics alone, as ibping -c 0 does (ibping's default is its
	// unsigned ~0, 1<<32 - 1: until ctx ends, in practice).
	Count uint64
	// Flood is -f: no pause between pings and no line per pong.
	Flood bool
	// OUI is -o, the OUI the pings carry: its low 24 bits go out as they
	// are, 0 too (ibping sends what -o says; callers wanting ibping's
	// default set PingOUI).
	OUI uint32
	// Interval is the pause between pings (0: one second, ibping's).
	Interval time.Duration
	// Pong, when set, is called with each pong line as it comes (ibping
	// prints as it goes; WriteIBPing prints them all at the end).
	Pong func(line string)
	// Lost, when set, is called for each ping nobody answered with the
	// warning libibmad's mad_rpc_rmpp prints for it on stderr, naming
	// the target: "mad_rpc_rmpp: _do_madrpc failed; dport (Lid 99)".
	Lost func(warning string)
}

// IBPing is an ibping run: its pongs and statistics.
type IBPing struct {
	PortID      string        `json:"portid"`
	Host        string        `json:"host"` // the first pong's host
	Pongs       []Pong        `json:"pongs,omitempty"`
	Transmitted uint64        `json:"transmitted"`
	Received    uint64        `json:"received"`
	LossPercent uint64        `json:"loss_percent"`
	Time        time.Duration `json:"time_ns"`
	RTTMin      time.Duration `json:"rtt_min_ns"`
	RTTAvg      time.Duration `json:"rtt_avg_ns"`
	RTTMax      time.Duration `json:"rtt_max_ns"`

	flood bool
}

// Pong is one answer.
type Pong struct {
	Host string        `json:"host"`
	RTT  time.Duration `json:"rtt_ns"`
}

func pingMAD(oui uint32) []byte {
	b := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: PingClass, ClassVersion: PingVersion, Method: mad.MethodGet}
	h.Put(b)
	mad.SetVendorOUI(b, oui)
	return b
}

// IBPingRun pings o.Target until Count pings were sent or ctx ends (as
// ibping on SIGINT: the statistics of what was sent). A ping without an
// answer is lost, not an error.
func IBPingRun(ctx context.Context, env *Env, o IBPingOptions) (*IBPing, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: ibping: no session")
	}
	s := env.Session
	oui := o.OUI & 0xffffff // IB_VEND2_OUI_F's 24 bits
	interval := o.Interval
	if interval == 0 {
		interval = time.Second
	}
	t, err := s.LIDOf(ctx, o.Target)
	if err != nil {
		return nil, &ToolError{Msg: "can't resolve destination port " + targetArg(o.Target), Err: err}
	}
	r := &IBPing{PortID: PortID(t), flood: o.Flood}
	start := time.Now()
	var total time.Duration
	r.RTTMin = -1
	for n := uint64(0); n < o.Count; n++ {
		if ctx.Err() != nil {
			break
		}
		r.Transmitted++
		t0 := time.Now()
		resp, err := s.Do(ctx, &fabric.Packet{Addr: fabric.Addr{LID: t.LID, QPN: 1, QKey: qp1QKey}, Data: pingMAD(oui)})
		if err == nil && resp.Status == 0 && len(resp.Data) > pingData && mad.StatusOf(resp.Data) == 0 {
			rtt := time.Since(t0)
			host := nulTerminated(resp.Data[pingData:])
			if r.Received == 0 {
				r.Host = host
			}
			r.Received++
			r.Pongs = append(r.Pongs, Pong{host, rtt})
			total += rtt
			r.RTTMin = minDur(r.RTTMin, rtt)
			r.RTTMax = max(r.RTTMax, rtt)
			if o.Pong != nil && !o.Flood {
				o.Pong(pongLine(host, r.PortID, rtt))
			}
		} else if te := (*engine.TimeoutError)(nil); o.Lost != nil && errors.As(err, &te) {
			o.Lost("mad_rpc_rmpp: _do_madrpc failed; dport (" + r.PortID + ")")
		}
		if !o.Flood { // ibping sleeps after every ping, the last one too
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}
	r.Time = time.Since(start)
	if r.RTTMin < 0 {
		r.RTTMin = 0
	}
	if r.Received > 0 {
		r.RTTAvg = total / time.Duration(r.Received)
	}
	if lost := r.Transmitted - r.Received; lost != 0 {
		r.LossPercent = lost * 100 / r.Transmitted
	}
	return r, nil
}

// qp1QKey is the well-known Q_Key of QP1.
const qp1QKey = 0x80010000

func minDur(a, b time.Duration) time.Duration {
	if a < 0 || b < a {
		return b
	}
	return a
}

func nulTerminated(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// ms is ibping's "%d.%03d" milliseconds.
func ms(d time.Duration) string {
	us := d.Microseconds()
	return fmt.Sprintf("%d.%03d", us/1000, us%1000)
}

func pongLine(host, pid string, rtt time.Duration) string {
	return fmt.Sprintf("Pong from %s (%s): time %s ms", host, pid, ms(rtt))
}

// WriteIBPing prints r as ibping does: a line per pong (none with -f),
// then the statistics. With live set, the pongs were printed as they
// came (IBPingOptions.Pong) and only the statistics are written.
func WriteIBPing(b *strings.Builder, r *IBPing, live bool) {
	if !r.flood && !live {
		for _, p := range r.Pongs {
			b.WriteString(pongLine(p.Host, r.PortID, p.RTT))
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(b, "\n--- %s (%s) ibping statistics ---\n", r.Host, r.PortID)
	fmt.Fprintf(b, "%d packets transmitted, %d received, %d%% packet loss, time %d ms\n",
		r.Transmitted, r.Received, r.LossPercent, r.Time.Milliseconds())
	fmt.Fprintf(b, "rtt min/avg/max = %s/%s/%s ms\n", ms(r.RTTMin), ms(r.RTTAvg), ms(r.RTTMax))
}

// IBPingServe is ibping -S: it answers every ping for oui (its low 24
// bits, as umad_register_oui takes them; 0 is refused as the kernel
// refuses a vendor agent without an OUI) on env's port with name (HostAndDomain's, as ibping's) until ctx
// ends, and returns how many it answered.
func IBPingServe(ctx context.Context, env *Env, oui uint32, name string) (uint64, error) {
	if env == nil || env.Session == nil {
		return 0, fmt.Errorf("diag: ibping: no session")
	}
	oui &= 0xffffff
	var data [pingDataLen]byte
	copy(data[:len(data)-1], name)
	a := fabric.Agent{Class: PingClass, Version: PingVersion, OUI: oui}.WithMethods(mad.MethodGet)
	return serveCounting(ctx, env, a, fmt.Sprintf("can't serve class %d on this port", PingClass), func(req *fabric.Packet) []byte {
		if len(req.Data) < pingData || mad.MethodOf(req.Data) != mad.MethodGet {
			return nil
		}
		resp := make([]byte, mad.Size)
		copy(resp, req.Data)
		mad.SetMethod(resp, mad.MethodGetResp)
		mad.SetStatus(resp, 0)
		copy(resp[pingData:], data[:])
		return resp
	})
}

// serveCounting answers the requests of agent a on env's port with h
// until ctx ends, and returns how many h answered (h returns nil for
// those it does not). A refused registration is a *ToolError saying
// refused.
func serveCounting(ctx context.Context, env *Env, a fabric.Agent, refused string, h engine.Handler) (uint64, error) {
	var n atomic.Uint64
	stop, err := env.Session.Serve(ctx, a, func(req *fabric.Packet) []byte {
		resp := h(req)
		if resp != nil {
			n.Add(1)
		}
		return resp
	})
	if err != nil {
		return 0, &ToolError{Msg: refused, Err: err}
	}
	<-ctx.Done()
	stop()
	return n.Load(), nil
}

// HostAndDomain is the name ibping -S answers with: gethostname, then
// "." and getdomainname unless that is empty (Linux's is "(none)" when
// unset, and ibping then says "host.(none)").
func HostAndDomain() string {
	h, d := hostDomain()
	if d != "" {
		return h + "." + d
	}
	return h
}

// SysstatLocal is what ibsysstat -S answers on this machine: the host
// name (HostAndDomain) and /proc/cpuinfo's processors.
func SysstatLocal() *SysstatInfo {
	info := &SysstatInfo{}
	info.Host, info.Domain = hostDomain()
	if text, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		info.CPUs = ParseCPUInfo(string(text))
	}
	return info
}

// hostDomain is gethostname's and getdomainname's names ("?hostname?"
// when the first fails; "" for a domain that cannot be read).
func hostDomain() (host, domain string) {
	h, err := os.Hostname()
	if err != nil {
		h = "?hostname?"
	}
	d, err := os.ReadFile("/proc/sys/kernel/domainname")
	if err != nil {
		return h, ""
	}
	return h, strings.TrimRight(string(d), "\n")
}
