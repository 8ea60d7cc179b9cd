// Package kernel adapts native/umad (the kernel's /dev/infiniband/umadN
// devices) to fabric.Transport and fabric.Fabric. It does not use
// fabric/mux: the kernel itself owns TIDs, timeouts, retries, method
// ownership and the receive queue, so the adapter only translates.
//
// # Mapping
//
//   - Fabric.Ports lists ports in libibumad's resolution order (devices
//     in directory order, node types 1..3, ports by number); Fabric.Open
//     is umad_open_port with its default-port rules (umad.Resolve), the
//     ABI check and ENABLE_PKEY, so every Transport uses the 64-byte
//     header.
//   - Planes: Fabric is a fabric.Pairer (umad.SMIGSIPairs and
//     umad.PairByCAName on sysfs). Open of either side of a planarized
//     HCA (CAs sharing a port GUID, IsSMDisabled on the GSI side) opens
//     the other side as libibmad's mad_rpc_open_port2 does and returns a
//     fabric/pair Transport: SMPs leave through the SMI device's umad fd,
//     every other class through the GSI device's; Port() is the GSI
//     side's, with SMIName and SMIPort set. Normal ports are unchanged.
//   - Register uses REGISTER_AGENT2. RMPP classes (SA, DevMgt, DevAdm,
//     BIS, vendor range 2) and send-only agents get rmpp_version 1, so
//     the kernel does RMPP and Caps().RMPP is true; other classes get
//     0 because the kernel refuses rmpp_version for them (EINVAL).
//   - Errors map to the fabric sentinels: ENOMEM -> ErrTooManyAgents;
//     EINVAL on a registration with methods -> ErrMethodInUse (the kernel
//     does not say more; conflicts between agents of one Transport are
//     detected before the ioctl); other EINVAL -> ErrInvalid (a
//     duplicate outstanding TID on write among them); unknown agents ->
//     ErrNoAgent; use after Close -> net.ErrClosed.
//   - fabric.Packet <-> ib_user_mad_hdr: Timeout is rounded up to whole
//     milliseconds, negative becomes 0xFFFFFFFF (forever); Addr fields
//     map one to one (LID, QPN, QKey, flow label big-endian on the wire).
//   - Recv turns ctx into a read deadline with context.AfterFunc and
//     grows its buffer on ENOSPC. A timed-out request comes back with
//     Status 110 and, as the kernel returns it, only the 24-byte MAD
//     header (TID as transmitted, method and attribute of the request):
//     ibscript does not pad it to 256 bytes (fabric/mux returns the whole
//     request; callers use only the header).
//
// # RDMA CM
//
// Fabric implements fabric.CMProvider over native/rdmacm: OpenCM checks
// that the rdma_cm device (Options.CMPath, /dev/infiniband/rdma_cm by
// default) exists (errors.ErrUnsupported otherwise, so rdmacm.New falls
// back to the user-space IB CM of rdmacm/ibcm), and each CMChannel is one rdma_cm fd.
// Options.OpenCM replaces the device with another rdmacm.Dev, such as
// rdmacmtest's model of the kernel, whose CM plays the kernel's between
// the model's ports (cm_test.go runs the CM conformance suite through it;
// TestHardwareCM and TestHardwareConformance run on the host's device
// when it exists).
//
// # Errors
//
// Open on a host without umad ports wraps ErrNoDevices ("no InfiniBand
// devices: /sys/class/infiniband_mad has no umad ports"); without access
// to the device node it names the file, says that root or the rdma group
// is needed, and wraps fs.ErrPermission; an old kernel wraps
// *umad.ABIVersionError naming the version read (EOPNOTSUPP); no usable
// port, and a CA or port that sysfs does not list, wrap syscall.ENODEV
// (fabric.ErrNoDevice), as on every backend: libibumad accepts a CA name
// with a port number unchecked and fails later with -EIO (get_port) or
// -EINVAL (open_port), which ibscript does not reproduce. HasPorts is what
// --fabric auto checks.
//
// # Testing
//
// native/umad/umadtest models the kernel at the fd level; the conformance
// suite runs on it (conformance_test.go, fabric_test.go), and
// TestHardware runs against /dev/infiniband/umad0 when it exists
// (IBSCRIPT_TEST_HW=1 turns its skip into a failure).
//
// Decisions on umad-abi.md section 13 are in native/umad's package doc;
// this package inherits them.
//
// # Concurrency
//
// Fabric and Transport are safe for concurrent use: Send, Register and
// Unregister concurrently with one Recv at a time; Close unblocks Recv.
//
// # Ownership
//
// Whoever opens a Transport closes it; Fabric.Close closes the
// Transports opened from it. Whoever opens a CMDevice closes it (which
// closes its channels); Fabric.Close does not.
package kernel
