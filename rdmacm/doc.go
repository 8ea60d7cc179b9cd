// Package rdmacm is librdmacm for ibscript: event channels, ids, address
// and route resolution, connections (RC and UD), events with per-id acks,
// synchronous ids, rdma_migrate_id and rdma_destroy_id, with librdmacm's
// names and rules (rdmacm-abi.md sections 6 to 9), written once over a
// fabric.CMDevice:
//
//   - the fabric's own RDMA CM when it has one (fabric.CMProvider: the
//     kernel backend's /dev/infiniband/rdma_cm, where the kernel resolves
//     addresses and routes and speaks the IB CM);
//   - otherwise package ibcm's user-space RDMA CM over class 0x07, on
//     ports the CM opens through the fabric (the embedded simulator,
//     ibsim, a host without rdma_cm).
//
// Addresses are what librdmacm takes (Addr): IP addresses, AF_INET and
// AF_INET6, which the device resolves (the kernel through its netdevs,
// IPoIB or RoCE; ibcm through the IPoIB addresses of the fabric's ports,
// fabric.IPoIB and Options.IPoIB), or AF_IB: ports named by LID or GID,
// the CM turning LIDs into GIDs through the fabric's ports, or a
// PathRecord from the engine's SA for remote LIDs. With AF_IB private
// data has no RDMA CM header in front: a CONNECT_REQUEST reports the
// REQ's whole 92 bytes (a UD one the SIDR_REQ's 216), and Connect takes
// up to MaxConnectPrivateData bytes. With IP addresses the device puts
// RDMA CM's 36-byte IP header first and strips it on the passive side:
// Connect takes up to MaxConnectPrivateDataIP (56; UD 180) bytes and a
// CONNECT_REQUEST reports 56 (180), on the kernel and in ibcm alike. As
// librdmacm does for an id with a QP, the
// active side answers the CONNECT_RESPONSE with the RTU when it fetches
// it, and reports ESTABLISHED (CONNECT_ERROR when the RTU fails): a
// synchronous Accept returns once the peer has fetched its response.
//
// Package cmtest holds the conformance suite every device passes.
//
// # Concurrency
//
// A CM, its channels and ids are safe for concurrent use, with
// librdmacm's rule that an id is not used while it migrates. GetEvent,
// Poll and WaitPending block without holding the CM's lock; a call that
// waits for acks (DestroyID, MigrateID) gives up after Options.AckWait or
// its ctx.
//
// # Ownership
//
// New does not own the fabric or the session; the CM owns its device and
// Close closes it with every channel and id. An EventChannel with ids
// cannot close (EBUSY); destroy its ids first.
//
// # Errors
//
// Errors name the call as librdmacm does ("rdmacm: connect: id 3 is idle,
// not route resolved: ...") and wrap the syscall.Errno of the refusal
// (EINVAL, ENOENT, EBUSY, EADDRINUSE, ETIMEDOUT, ECONNREFUSED for a
// synchronous call that was rejected), so callers use errors.Is; a closed
// CM or channel wraps net.ErrClosed.
package rdmacm
