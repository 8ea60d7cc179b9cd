package diag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// SMPDumpOptions are smpdump's: a LID or (-D) a directed route, the
// attribute ID and modifier, and -s (print the data as a string).
type SMPDumpOptions struct {
	Target engine.Target
	Attr   uint16
	Mod    uint32
	String bool
}

// SMPDump is one SMP Get's answer: its 64 bytes of data and its status
// (the D bit set on a directed-route answer, as smpdump prints it).
// TimedOut says no answer came: smpdump then prints the request's data
// (zeros) and exits 0, and so does diag.
type SMPDump struct {
	Target   string `json:"target"`
	Attr     uint16 `json:"attr"`
	Mod      uint32 `json:"mod"`
	Data     string `json:"data"` // hex
	Status   uint16 `json:"status"`
	TimedOut bool   `json:"timed_out,omitempty"`

	raw    []byte
	str    bool
	direct bool
}

// SMPDumpRun sends one SMP Get as smpdump does.
func SMPDumpRun(ctx context.Context, env *Env, o SMPDumpOptions) (*SMPDump, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: smpdump: no session")
	}
	r := &SMPDump{Target: o.Target.String(), Attr: o.Attr, Mod: o.Mod, str: o.String, direct: o.Target.Kind == engine.ByDR}
	d, err := env.Session.SMP(ctx, o.Target, mad.MethodGet, o.Attr, o.Mod, nil)
	var se *engine.StatusError
	switch {
	case err == nil:
	case errors.As(err, &se):
		r.Status = se.Status
	case errors.Is(err, fabric.ErrTimeout):
		r.TimedOut = true
	default:
		return nil, err
	}
	if r.direct && !r.TimedOut {
		r.Status |= 0x8000 // the D bit of every directed-route answer
	}
	if len(d) < mad.SMPDataLen {
		d = append(d, make([]byte, mad.SMPDataLen-len(d))...)
	}
	// No key leaves ibscript (docs/security.md): SMInfo's SM_Key and
	// PortInfo's M_Key read as zeros here, where C smpdump prints them.
	mad.MaskAttrKeys(mad.ClassSubnLID, o.Attr, d)
	r.raw, r.Data = d, fmt.Sprintf("%x", d)
	return r, nil
}

// WriteSMPDump prints r as smpdump does: the data as 16-byte lines of
// 2-byte hex groups (or, with -s, as text up to its first NUL), then the
// status when not zero.
func WriteSMPDump(b *strings.Builder, r *SMPDump) {
	if r.str {
		for _, c := range r.raw {
			if c == 0 {
				break
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	} else {
		XDump(b, r.raw)
	}
	if r.Status != 0 {
		fmt.Fprintf(b, "SMP status: 0x%x\n", r.Status)
	}
}

// XDump is libibmad's xdump: bytes in pairs, eight pairs a line.
func XDump(b *strings.Builder, p []byte) {
	const hex = "0123456789abcdef"
	i := 0
	for i < len(p) {
		b.WriteByte(hex[p[i]>>4])
		b.WriteByte(hex[p[i]&0xf])
		if i++; i >= len(p) {
			break
		}
		b.WriteByte(hex[p[i]>>4])
		b.WriteByte(hex[p[i]&0xf])
		if i++; i%16 != 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte('\n')
		}
	}
	if i%16 != 0 {
		b.WriteByte('\n')
	}
}
