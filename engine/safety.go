package engine

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// ErrSetRefused is wrapped by the error of a Set refused on a production
// transport without Options.AllowSet.
var ErrSetRefused = errors.New("set refused on a production fabric: this session does not allow Sets")

// ErrAuditFailed is wrapped by the error of a Set whose audit line could
// not be written (Options.Audit failed): the Set was not sent.
var ErrAuditFailed = errors.New("audit line not written, Set not sent")

// ErrMADBudget is wrapped by the error of a MAD past Options.MaxMADs.
// Discover fails as a whole with it (never a partial fabric whose
// missing nodes look like fabric faults).
var ErrMADBudget = errors.New("MAD budget of the run used up")

// AuditEntry describes one Set the Session sends (Options.Audit).
type AuditEntry struct {
	Time    time.Time
	User    string // Options.AuditUser
	Target  string // "lid:5", "dr:0,1"
	Class   uint8
	AttrID  uint16
	AttrMod uint32
	Attr    string // "PortInfo port 3"
	// New is the attribute data sent, trailing zeros trimmed, with
	// every key zeroed (mad.MaskKeys: M_Key in PortInfo, SM_Key in
	// SMInfo and SA records): keys are never written to an audit log.
	New []byte
	// Old is the value before the Set when the caller knew it; the
	// engine does not read it (nil).
	Old []byte
}

// String is the audit line: time, user, target, attribute and values.
func (a AuditEntry) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s set user=%q target=%s class=0x%02x attr=%q", a.Time.UTC().Format(time.RFC3339Nano),
		a.User, a.Target, a.Class, a.Attr)
	if a.Old != nil {
		fmt.Fprintf(&b, " old=%s", hex.EncodeToString(a.Old))
	} else {
		b.WriteString(" old=unknown")
	}
	fmt.Fprintf(&b, " new=%s", hex.EncodeToString(a.New))
	return b.String()
}

// gateSet refuses a Set on a production transport unless allowed, and
// reports every Set that goes out to the log and the audit hook.
func (s *Session) gateSet(o *op) error {
	if s.production && !s.allowSet {
		return fmt.Errorf("engine: %s %s: %w", o.target, attrName(o.class, o.attrID, o.attrMod), ErrSetRefused)
	}
	s.log.Info("engine: set", "target", o.target.String(), "attr", attrName(o.class, o.attrID, o.attrMod))
	if err := s.auditSet(o.target.String(), o.req[:o.n]); err != nil {
		return fmt.Errorf("engine: %s %s: %w: %w", o.target, attrName(o.class, o.attrID, o.attrMod), ErrAuditFailed, err)
	}
	return nil
}

// auditSet gives the audit hook, if any, the entry of the Set req sent to
// target, its keys masked.
func (s *Session) auditSet(target string, req []byte) error {
	if s.audit == nil || len(req) < mad.HeaderSize {
		return nil
	}
	req = append([]byte(nil), req...)
	mad.MaskKeys(req) // M_Key (PortInfo), SM_Key (SMInfo, SA records) and the class keys
	class, attrID, attrMod := mad.MgmtClassOf(req), mad.AttrIDOf(req), mad.AttrModOf(req)
	var data []byte
	if class == mad.ClassSubnLID || class == mad.ClassSubnDR {
		data = smp.Data(req)
	} else if len(req) > 64 {
		data = req[64:] // a GMP's data (PerfMgt, vendor: after the class header)
	}
	for len(data) > 0 && data[len(data)-1] == 0 {
		data = data[:len(data)-1]
	}
	return s.audit(AuditEntry{Time: time.Now(), User: s.auditUser, Target: target, Class: class,
		AttrID: attrID, AttrMod: attrMod, Attr: attrName(class, attrID, attrMod), New: data})
}

// AuditRaw writes the audit line of a Set a UMADPort is about to send
// (UMADPort.Audit): the same entry, with the same key masking, as the
// Session's own Sets; an error means the line was not written and the Set
// must not go out. The target is the destination LID (a directed-route
// SMP's path is in the entry's data).
func (s *Session) AuditRaw(data []byte, addr fabric.Addr) error {
	if err := s.auditSet(fmt.Sprintf("lid:%d", addr.LID), data); err != nil {
		return fmt.Errorf("%w: %w", ErrAuditFailed, err)
	}
	return nil
}

// spend takes one MAD from the budget (Options.MaxMADs).
func (s *Session) spend(o *op) error {
	if s.maxMADs > 0 && s.madsSent.Add(1) > s.maxMADs {
		return fmt.Errorf("engine: %s %s: %w (%d MADs)", o.target, attrName(o.class, o.attrID, o.attrMod), ErrMADBudget, s.maxMADs)
	}
	return nil
}

// AllowsSet reports Options.AllowSet, for ports a host opens beside the
// Session (UMADPort.AllowSet).
func (s *Session) AllowsSet() bool { return s.allowSet }
