// Package engine is ibscript's MAD engine: a Session on one
// fabric.Transport runs transactions (a request and its response or
// timeout), typed SMP and PerfMgt queries, and fabric discovery, with the
// scheduling a production fabric needs.
//
// Targets are parsed in one place, ParseTarget: "lid:5" (or "5", "0x5"),
// "dr:0,1,3" (smpquery -D convention), "guid:0x0002c90300001234" (resolved
// through the last discovery, sweeping the fabric if needed).
//
// # Scheduling
//
// Many MADs are in flight at once, up to Options.Window; SMPs to one
// destination node go one at a time (a switch buffers one VL15 packet).
// The destination is the DLID of a LID target, the route of a DR target,
// and during discovery the node GUID once NodeInfo has given it (the first
// NodeInfo on each new route is keyed by the route, since the node is not
// known yet). Retries are the transport's: each request is sent with the
// per-try Timeout and Retries and completes exactly once.
//
// # RMPP and SA
//
// New and NewUMADPort put an RMPP driver (package fabric/rmppdriver) in
// front of the transport: over a transport without kernel RMPP (sim, ibsim) it
// segments RMPP sends and coalesces multi-segment receives for agents
// registered with RMPPVersion 1, as the kernel does (rmpp.md section 8),
// including ENOSPC with the needed length in UMADPort.Recv; over one with
// RMPP (fabric/kernel) it passes everything through. Session's SA calls
// (SAQuery, SAGetTable, SAGet, NodeRecords, PathRecord, MultiPathRecords)
// use an RMPP agent of the driver's own (rmppdriver.Driver.Call);
// Options.RMPP bounds its receive transfers, Session.RMPPStats counts
// what it refused.
//
// # Concurrency
//
// A Session is safe for concurrent use. It owns one goroutine, the reader,
// which receives every completion from the transport and routes it by TID
// to the waiting call (or runs a discovery callback, which may send the
// next queries). A transport with SetHandler (fabric/mux: the sim and
// ibsim backends) hands completions over directly instead, on the
// goroutine that produced them, which saves a goroutine wake-up per MAD;
// re-entry is flattened into a queue (Session.dispatch), so the stack does
// not grow with chains of queued MADs. Lock order: sweep.mu before Session.agentMu; Session.mu
// and Session.discMu are taken alone.
//
// # Ownership
//
// New takes ownership of the Transport; Close closes it, waits for the
// reader goroutine and fails the calls still pending with an error
// wrapping net.ErrClosed. Byte slices passed in are not kept; slices
// returned are the caller's.
//
// # Errors
//
// Every blocking call takes a ctx and returns ctx.Err() when it ends. A
// request without a response returns a *TimeoutError (errors.Is
// fabric.ErrTimeout) naming the TID, the tries, the attribute and the
// target; a response with a non-zero MAD status returns a *StatusError
// naming the attribute and the status text (mad.StatusText). Bulk
// operations (Discover) never stop on one target: they return per-target
// TargetErrors beside the result. Bad targets wrap ErrBadTarget, unknown
// GUIDs ErrNotFound.
package engine
