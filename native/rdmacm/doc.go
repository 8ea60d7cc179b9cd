// Package rdmacm mirrors the kernel's RDMA CM user ABI
// (/dev/infiniband/rdma_cm, include/uapi/rdma/rdma_user_cm.h, ABI 4) with
// librdmacm's framing rules, using only the standard library and
// golang.org/x/sys.
//
// # Purpose
//
// abi.go holds one layout table per kernel structure (offset, size, C
// declaration quoted) and the encoders and decoders of the commands a
// channel needs: CREATE_ID, DESTROY_ID, BIND, RESOLVE_ADDR, RESOLVE_ROUTE,
// LISTEN, CONNECT, ACCEPT, REJECT, DISCONNECT, GET_EVENT, MIGRATE_ID and
// QUERY (RDMA_USER_CM_QUERY_ADDR, the id's addresses).
// A Channel is one open rdma_cm fd (an rdma_event_channel): its methods
// frame a command, hand it with its response buffer to the Dev, and decode
// what the kernel wrote back.
//
// The response buffer's address travels inside the command (the kernel
// copies the response there). It is taken from a heap slice through
// respPtr, written into the command just before write(2), and the buffer is
// kept alive with runtime.KeepAlive until the call returns; nothing else
// holds a raw address.
//
// # Concurrency
//
// A Channel is safe for concurrent use: commands are single writes, as the
// kernel serializes them per fd. Wait and GetEvent may run concurrently
// with commands.
//
// # Ownership
//
// Open returns a Channel the caller must Close; closing it destroys every
// id it owns (the kernel does).
//
// # Errors
//
// Errors wrap the errno the kernel returns (syscall.EINVAL, ENOENT,
// ENOSPC, EAGAIN ...), so callers use errors.Is. A short write is ENODATA,
// as librdmacm reports it. On systems other than Linux Open returns an
// error wrapping errors.ErrUnsupported.
//
// # Choices
//
// librdmacm refuses to work without a verbs device (ENODEV); this package
// does not check, as the kernel needs no device for CREATE_ID, GET_EVENT,
// MIGRATE_ID and DESTROY_ID.
package rdmacm
