package engine

// Retransmits returns how many requests the Session's transport has
// retransmitted so far (fabric.Caps.Retransmits), and false when the
// transport does not count them (the kernel retries out of sight).
func (s *Session) Retransmits() (uint64, bool) {
	if f := s.tr.Caps().Retransmits; f != nil {
		return f(), true
	}
	return 0, false
}
