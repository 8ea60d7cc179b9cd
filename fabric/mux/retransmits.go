package mux

// Retransmits returns how many requests the Mux resent after a timeout so
// far (Stats().Retransmits), as Caps().Retransmits.
func (m *Mux) Retransmits() uint64 { return m.retransmits.Load() }
