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

// WindowLimiter is implemented by a transport whose peer stalls when more
// requests are in flight than it can answer without waiting on us, such as
// fabric/ibsim's over a unix socket: ibsim writes every answer with a
// non-blocking write retried in a loop, so once the answers fill our
// socket's queue (net.unix.max_dgram_qlen datagrams) it spins until we
// read. New uses MaxWindow as the default window when it is smaller than
// DefaultWindow; an explicit Options.Window is kept as given.
type WindowLimiter interface {
	MaxWindow() int // 0: no limit
}
