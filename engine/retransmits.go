package engine

// Retransmitter is implemented by a transport that counts the requests it
// resent after a timeout (the retries of fabric.Packet.Retries), such as
// fabric/ibsim's Transport. The count only grows.
type Retransmitter interface {
	Retransmits() uint64
}

// Retransmits returns how many requests the Session's transport has
// retransmitted so far, and false when the transport does not count them.
func (s *Session) Retransmits() (uint64, bool) {
	if r, ok := s.tr.(Retransmitter); ok {
		return r.Retransmits(), true
	}
	return 0, false
}
