// Package rmppdriver is RMPP (multi-packet MADs) in user space, in front
// of any fabric.Transport: what the Linux kernel's MAD layer does for
// agents registered with rmpp_version 1, for transports that do no RMPP
// themselves (the embedded simulator, ibsim), and a pass-through over
// those that do (the kernel's umad). The segmentation arithmetic and the
// sender and receiver state machines are mad/rmpp's; this package adds
// the I/O: timers, windows on the wire, coalesced receives, the receive
// transfers' memory limits, and Call, a request whose whole answer comes
// back as one message (the engine's SA queries).
//
// A Driver is itself a fabric.Transport and keeps the whole contract
// (fabrictest's conformance suite runs on it); its Caps are the wrapped
// transport's with RMPP set. The engine puts one in front of every
// transport it is given (engine.Options.RMPP configures its Limits).
package rmppdriver
