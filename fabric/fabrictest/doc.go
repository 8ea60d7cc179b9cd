// Package fabrictest holds the test doubles and the conformance suite of
// the fabric.Transport contract.
//
// Pipe is an in-memory port pair: side A is a real mux.Mux (so Pipe tests
// exercise the same umad semantics the ibsim and sim backends use), side B
// a scripted peer whose Responder answers, drops, delays or duplicates.
// TestTransport runs every point of the contract against any backend,
// given a Peer for the far side: a Pipe, or a TransportPeer made from a
// second Transport of that backend.
//
// # Concurrency
//
// Pipe and TransportPeer are safe for concurrent use. A TransportPeer owns
// one goroutine; Close stops it. A Pipe has none (Delay uses timers).
//
// # Ownership
//
// Whoever makes a Pipe or TransportPeer closes it; Pipe.Close closes the
// Muxes of side A.
//
// # Errors
//
// Errors wrap the fabric sentinels and net.ErrClosed, as the contract
// says.
package fabrictest
