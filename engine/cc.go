package engine

import (
	"context"
	"fmt"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
)

// CC sends one Congestion Control MAD (class 0x21, method Get or Set) for
// attribute attrID with modifier mod to the CC agent of t, with the
// session's CC_Key (Options.CCKey, or the CCKey call option), and returns
// the attribute data of the response: 224 bytes of log data for
// CongestionLog, 192 bytes of management data for the others. data, when
// not nil, is the attribute to send. Congestion Control is a GMP class on
// QP1, LID-routed: a DR target is asked for its LID first, a GUID target
// takes it from discovery. A response with a non-zero status returns its
// data and a *StatusError.
func (s *Session) CC(ctx context.Context, t Target, method uint8, attrID uint16, mod uint32, data []byte, opts ...CallOption) ([]byte, error) {
	if len(data) > mad.Size-cc.DataOffset(attrID) {
		return nil, fmt.Errorf("engine: cc to %s: %d bytes of data: %w", t, len(data), fabric.ErrInvalid)
	}
	o, err := s.ccCall(ctx, t, method, attrID, mod, data, opts)
	if err != nil {
		return nil, err
	}
	return s.copyData(o, cc.Data)
}

func (s *Session) ccCall(ctx context.Context, t Target, method uint8, attrID uint16, mod uint32, data []byte, opts []CallOption) (*op, error) {
	return s.gmpCall(ctx, t, mad.ClassCC, cc.Version, attrID, mod, opts, func(buf []byte, c callOpts) ([]byte, error) {
		b, err := cc.NewRequest(buf, method, 0, attrID, mod, c.cckey)
		if err != nil {
			return nil, fmt.Errorf("engine: cc to %s: %w", t, err)
		}
		copy(cc.Data(b), data)
		return b, nil
	})
}

// isCC reports whether l is one of package cc's layouts (CongestionLog's
// CA layout shares the switch layout's ID).
func isCC(l *mad.Layout) bool { return cc.LayoutByID(l.ID) == l || l == cc.CongestionLogCALayout() }

// CongestionLog reads the CongestionLog of t's CC agent and returns its
// layout, chosen by the LogType the agent answered as ibccquery chooses it
// (a switch's, LogType 1, or a CA's, 2), and the decoded value
// (*cc.CongestionLog or *cc.CongestionLogCA).
func (s *Session) CongestionLog(ctx context.Context, t Target, opts ...CallOption) (mad.Attribute, error) {
	d, err := s.CC(ctx, t, mad.MethodGet, cc.AttrCongestionLog, 0, nil, opts...)
	if err != nil {
		return nil, err
	}
	l, err := cc.LogLayout(d)
	if err != nil {
		return nil, fmt.Errorf("engine: %s: %w", t, err)
	}
	v := cc.CodecOf(l).(mad.Attribute)
	return v, v.UnmarshalBinary(d)
}
