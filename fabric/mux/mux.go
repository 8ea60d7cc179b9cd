// Package mux gives umad semantics to a raw MAD wire: agents and their
// method ownership, TID ownership, matching of responses, timeouts and
// retries, and the receive queue of an umad file descriptor. The ibsim
// client and the embedded simulator are raw wires (ibsim never times
// anything out); a Mux on top makes each of them a fabric.Transport that
// keeps the whole contract.
package mux

import "github.com/ibscript/ibscript/fabric"

// Wire is the raw side of a port. It transmits MADs and hands every MAD
// received for the port to the Mux with Mux.Deliver; it knows nothing of
// agents, TIDs or timeouts.
type Wire interface {
	// Transmit sends p.Data to p.Addr. It must not keep p or p.Data after
	// it returns. A Wire may call Mux.Deliver from inside Transmit (the
	// embedded simulator answers synchronously).
	Transmit(p *fabric.Packet) error
	// Close releases the wire; it is called once, by Mux.Close.
	Close() error
}
