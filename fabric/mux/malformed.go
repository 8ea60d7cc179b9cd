package mux

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// dropMalformed counts a MAD Deliver cannot use and logs, at debug
// level, what was wrong with it, its length and where it came from. The
// line is built only when the logger takes debug lines.
func (m *Mux) dropMalformed(p *fabric.Packet) {
	m.malformed.Add(1)
	ctx := context.Background()
	if !m.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	m.log.LogAttrs(ctx, slog.LevelDebug, "mux: malformed MAD dropped",
		slog.String("why", malformedWhy(p.Data)), slog.Int("len", len(p.Data)),
		slog.Int("slid", int(p.Addr.LID)), slog.Int("sqp", int(p.Addr.QPN)))
}

// malformedWhy says why Deliver refused b.
func malformedWhy(b []byte) string {
	switch {
	case len(b) < mad.HeaderSize:
		return fmt.Sprintf("shorter than the %d-byte MAD header", mad.HeaderSize)
	case len(b) > mad.Size:
		return fmt.Sprintf("longer than %d bytes", mad.Size)
	case b[0] != 1:
		return fmt.Sprintf("base version %d, not 1", b[0])
	default:
		return fmt.Sprintf("vendor class 0x%02x shorter than its 40-byte header (no OUI)", mad.MgmtClassOf(b))
	}
}
