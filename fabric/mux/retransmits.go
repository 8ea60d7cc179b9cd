package mux

// Retransmits returns how many requests the Mux resent after a timeout so
// far (Stats().Retransmits); it makes the Mux an engine.Retransmitter.
func (m *Mux) Retransmits() uint64 { return m.retransmits.Load() }
