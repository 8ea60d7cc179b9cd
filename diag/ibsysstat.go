package diag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/topo"
)

// ibsysstat's protocol (infiniband-diags' ibsysstat.c): a Get of vendor
// class 0x33 (OpenIB sysstat, vendor range 2), class version 1, with the
// OpenIB OUI unless -o says otherwise; the attribute says what is asked
// (0x10 ping, 0x11 host, 0x12 cpu). The server answers every request of
// the class with a GetResp carrying its answer from MAD offset 40: for
// host its "host.domain", for cpu a "cpu N: model M MHZ F\n" line per
// processor of /proc/cpuinfo and a NUL, for ping (and any other
// attribute) nothing.
const (
	SysstatClass    = 0x33
	SysstatVersion  = 1
	SysstatAttrPing = 0x10
	SysstatAttrHost = 0x11
	SysstatAttrCPU  = 0x12
	// sysstatMaxCPUs is ibsysstat's MAX_CPUS: the processors it lists.
	sysstatMaxCPUs = 256
	// sysstatRoom is the room ibsysstat's server gives an answer: its
	// 64 KiB buffer less the umad header (64) and the vendor header.
	sysstatRoom = 2048*32 - 64 - pingData
)

// IBSysstatOptions are ibsysstat's: the destination and the op (ping,
// host or cpu; "" is ping), or Server (-S).
type IBSysstatOptions struct {
	// OUI is -o (default the OpenIB OUI); the MAD carries its low 24
	// bits.
	OUI uint32 `flag:"o,oui" arg:"<val>" help:"use specified OUI number" lua:"oui"`
	// Server is -S: answer requests until ctx ends (the command line:
	// until interrupted; Lua: until the script is, or its time limit).
	Server bool           `flag:"S,Server" help:"start in server mode (until interrupted)" lua:"server"`
	Target *engine.Target `pos:"0" lua:"target"`
	Op     string         `pos:"1" lua:"op"`
	// Info, when not nil, is what the server answers; nil: this
	// machine's (SysstatLocal), read when the server starts.
	Info *SysstatInfo
}

// SysstatInfo is what an ibsysstat server answers.
type SysstatInfo struct {
	// Host and Domain are gethostname's and getdomainname's names: the
	// answer is "host.domain", or "host" when Domain is empty.
	Host, Domain string
	// CPUs are the processors /proc/cpuinfo lists (at most 256), each
	// with its "model name" and "cpu MHz" texts as the file has them
	// after the colon (a leading space included), "(null)" for one it
	// lacks.
	CPUs []SysstatCPU
}

// SysstatCPU is one processor of /proc/cpuinfo.
type SysstatCPU struct{ Model, MHz string }

// IBSysstat is what ibsysstat printed: the answer of one op, or with
// -S how many requests the server answered.
type IBSysstat struct {
	PortID string `json:"portid,omitempty"`
	Op     string `json:"op,omitempty"`
	// Text is the server's answer to host or cpu as the client prints it
	// (up to its first NUL).
	Text   string `json:"text,omitempty"`
	Served uint64 `json:"served,omitempty"`

	server bool
}

// ibSysstatTool is ibsysstat.
var ibSysstatTool = NewTool(Tool{
	Name:    "ibsysstat",
	Lua:     "sysstat",
	Summary: "ask a port's ibsysstat server (vendor class 0x33) for ping, host or cpu, or -S: be one",
	Args:    "<dest lid|guid> [<op>]",
	Exclude: "D,y",
	MaxArgs: 2,
	Check:   checkSysstat,
	// ibsysstat -S never resolves its destination argument.
	Unaddressed: func(opts any) bool { return opts.(*IBSysstatOptions).Server },
	Example:     []string{"1", "host"},
	LuaDoc: `sysstat({target = LID, op = "ping" | "host" | "cpu", oui = 0x001405, server = false}) -> {portid, op, text} | {served}: ` +
		`the answer of target's ibsysstat server to op, as ibsysstat's client gets it (text: its host.domain or its cpu lines; none for ping); ` +
		`server = true is ibsysstat -S on the script's port until the script is interrupted or its time limit ends (served: the requests answered)`,
	LuaExample: `local r = diag.sysstat{target = 1, op = "host"}
print(r.portid, r.op, r.text)`,
}, IBSysstatOptions{OUI: PingOUI}, IBSysstatRun, BuilderText(WriteIBSysstat))

// sysstatOps are the ops ibsysstat's match_attr knows, by name.
var sysstatOps = map[string]uint16{"ping": SysstatAttrPing, "host": SysstatAttrHost, "cpu": SysstatAttrCPU}

// checkSysstat refuses an op ibsysstat does not know (its usage), with
// or without -S, before anything is sent.
func checkSysstat(opts any) error {
	o := opts.(*IBSysstatOptions)
	if _, ok := sysstatOps[o.Op]; !ok && o.Op != "" {
		return &UsageError{Msg: fmt.Sprintf("unknown op %q: want ping, host or cpu", o.Op)}
	}
	return nil
}

// IBSysstatRun asks o.Target's server as ibsysstat does, or with
// o.Server is one until ctx ends.
func IBSysstatRun(ctx context.Context, env *Env, o IBSysstatOptions) (*IBSysstat, error) {
	if err := checkSysstat(&o); err != nil {
		return nil, err
	}
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: ibsysstat: no session")
	}
	if o.Server {
		info := o.Info
		if info == nil {
			info = SysstatLocal()
		}
		n, err := IBSysstatServe(ctx, env, o.OUI, info)
		if err != nil {
			return nil, err
		}
		return &IBSysstat{Served: n, server: true}, nil
	}
	if o.Target == nil {
		return nil, &UsageError{Msg: "want <dest lid|guid> (or -S)"}
	}
	op := o.Op
	if op == "" {
		op = "ping"
	}
	s := env.Session
	t, err := s.LIDOf(ctx, *o.Target)
	if err != nil {
		return nil, &ToolError{Msg: "can't resolve destination port " + targetArg(*o.Target), Err: err}
	}
	pid := PortID(t)
	req := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: SysstatClass, ClassVersion: SysstatVersion, Method: mad.MethodGet, AttrID: sysstatOps[op]}).Put(req)
	mad.SetVendorOUI(req, o.OUI&0xffffff)
	// ibsysstat's agent is registered with RMPP: an answer longer than
	// a MAD (a big machine's cpu lines) comes whole. It sends once
	// (umad_send with no retries).
	resp, err := s.DoRMPP(ctx, &fabric.Packet{Addr: fabric.Addr{LID: t.LID, QPN: 1, QKey: qp1QKey}, Data: req}, engine.Retries(0))
	var te *engine.TimeoutError
	if errors.As(err, &te) && !te.Bounced && s.SilentTimeouts() {
		// Delivered and unanswered where the fabric times nothing out
		// (ibsim): nothing comes back to ibsysstat, whose umad_recv,
		// waiting as long as the send, fails: its IBPANIC.
		return nil, &IBPanic{Func: "ibsystat", Msg: "umad_recv failed.: " + strerror(err), Err: err}
	}
	if err != nil {
		// umad's status of a request nobody answered is ETIMEDOUT (the
		// kernel's timeout; ibsim's bounce), which ibsysstat prints with
		// strerror.
		return nil, &ToolError{Msg: "ibsystat to " + pid + ": " + strerror(err), Err: err}
	}
	// ibsysstat looks at the umad status only: an answer with a MAD
	// status (the kernel's "unsupported" where no server runs) is
	// printed as any other.
	r := &IBSysstat{PortID: pid, Op: op}
	if op != "ping" && len(resp.Data) > pingData {
		r.Text = nulTerminated(resp.Data[pingData:])
	}
	return r, nil
}

// WriteIBSysstat prints r as ibsysstat does: the answer and a newline
// (puts), or for ping its line; nothing for the server.
func WriteIBSysstat(b *strings.Builder, r *IBSysstat) {
	switch {
	case r.server:
	case r.Op == "ping":
		b.WriteString("sysstat ping succeeded\n")
	default:
		b.WriteString(r.Text + "\n")
	}
}

// IBSysstatServe is ibsysstat -S: it answers every request of the
// sysstat class for oui on env's port with info until ctx ends, and
// returns how many it answered. The agent is registered with RMPP, as
// ibsysstat's: an answer longer than one MAD (the cpu lines of a big
// machine) goes out as an RMPP transfer.
func IBSysstatServe(ctx context.Context, env *Env, oui uint32, info *SysstatInfo) (uint64, error) {
	if env == nil || env.Session == nil {
		return 0, fmt.Errorf("diag: ibsysstat: no session")
	}
	a := fabric.Agent{Class: SysstatClass, Version: SysstatVersion, OUI: oui & 0xffffff, RMPPVersion: 1,
		Methods: [2]uint64{^uint64(0), ^uint64(0) >> 1}} // every method the mask holds (0-126)
	return serveCounting(ctx, env, a, fmt.Sprintf("can't serve class %d", SysstatClass), func(req *fabric.Packet) []byte {
		if req.Status != 0 || len(req.Data) < pingData || mad.IsResponse(req.Data) {
			return nil
		}
		return SysstatReply(req.Data, info)
	})
}

// SysstatReply is ibsysstat's server's answer to req: req's header made
// a GetResp (status 0, same TID, attribute and modifier) with the RMPP
// header libibmad's mad_build_pkt writes (version 1, response time 0x1f,
// Active when the answer takes more than one MAD), req's reserved byte
// and OUI, and the answer from offset 40: as long as ibsysstat's
// server_respond sends it (40 bytes and mk_reply's count; the kernel pads
// a shorter send to a whole MAD, ibsim passes its length on).
func SysstatReply(req []byte, info *SysstatInfo) []byte {
	var data []byte
	switch mad.AttrIDOf(req) {
	case SysstatAttrHost:
		// mk_reply counts the dot and the domain, not the NUL after
		// them; without a domain the NUL that replaced the dot.
		data = append([]byte(info.Host), 0)
		if info.Domain != "" {
			data = append(append(data[:len(data)-1], '.'), info.Domain...)
		}
	case SysstatAttrCPU:
		data = sysstatCPUData(info.CPUs)
	}
	resp := make([]byte, pingData+len(data))
	// mad_encode rewrites the fields below in the request's buffer; the
	// rest (class-specific and reserved bytes) stays as received.
	copy(resp[:pingData], req)
	resp[0], resp[2] = 1, SysstatVersion
	mad.SetMethod(resp, mad.MethodGetResp)
	mad.SetStatus(resp, 0)
	rh := rmpp.Header{Version: 1, RespTime: 0x1f} // M_Key's bytes cleared, then the RMPP header
	if pingData+len(data) > mad.Size {
		rh.Flags = rmpp.FlagActive
	}
	rh.Put(resp)
	copy(resp[pingData:], data)
	return resp
}

// sysstatCPUData is mk_reply's cpu answer: a line per processor and a
// NUL. Past the server's room the line that does not fit is cut and the
// answer is as long as the room that was left, plus one: mk_reply's
// "ret = sz" (the room left, not what it wrote) and ret++.
func sysstatCPUData(cpus []SysstatCPU) []byte {
	var b []byte
	room, n := sysstatRoom, 0
	for i, c := range cpus {
		line := fmt.Sprintf("cpu %d: model %s MHZ %s\n", i, c.Model, c.MHz)
		if len(line) >= room {
			b = append(b, line[:room-1]...)
			n = room
			break
		}
		b = append(b, line...)
		room -= len(line)
		n += len(line)
	}
	n++
	for len(b) < n {
		b = append(b, 0)
	}
	return b[:n]
}

// ParseCPUInfo reads /proc/cpuinfo's text as ibsysstat's build_cpuinfo
// does: a processor per "processor\t" line (at most 256), its model and
// MHz from the "model name\t" and "cpu MHz\t" lines after it (the text
// after the first colon, up to the newline; the last one wins), read in
// fgets chunks of 1022 bytes.
func ParseCPUInfo(text string) []SysstatCPU {
	var cpus []SysstatCPU
	var model, mhz []*string
	br := bufio.NewReader(strings.NewReader(text))
	for {
		line, err := topo.Fgets(br, 1023) // fgets(line, sizeof(line) - 1, f)
		if len(line) == 0 && err != nil {
			break
		}
		switch {
		case strings.HasPrefix(line, "processor\t"):
			if len(model) == sysstatMaxCPUs {
				return sysstatCPUs(model, mhz, cpus)
			}
			model, mhz = append(model, nil), append(mhz, nil)
			continue
		case len(model) == 0:
			continue
		}
		_, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v, _, _ = strings.Cut(v, "\n")
		switch {
		case strings.HasPrefix(line, "model name\t"):
			model[len(model)-1] = &v
		case strings.HasPrefix(line, "cpu MHz\t"):
			mhz[len(mhz)-1] = &v
		}
	}
	return sysstatCPUs(model, mhz, cpus)
}

func sysstatCPUs(model, mhz []*string, cpus []SysstatCPU) []SysstatCPU {
	text := func(p *string) string {
		if p == nil {
			return "(null)" // glibc's printf of a NULL %s
		}
		return *p
	}
	for i := range model {
		cpus = append(cpus, SysstatCPU{Model: text(model[i]), MHz: text(mhz[i])})
	}
	return cpus
}
