// Package umad mirrors the kernel's umad ABI (/dev/infiniband/umadN,
// include/uapi/rdma/ib_user_mad.h, ABI version 5) with libibumad's
// semantics, using only the standard library and golang.org/x/sys. It
// knows nothing of the fabric contract, MAD codecs or Lua; fabric/kernel
// adapts it to fabric.Transport.
//
// # Pieces
//
//   - abi.go: the structs (ib_user_mad_hdr 64/56 bytes, reg_req 28 bytes,
//     reg_req2 40 bytes), each with a layout table (offset, size, byte
//     order) and field-by-field encoding: host-order fields with
//     binary.NativeEndian, __be fields with binary.BigEndian.
//   - ioctl.go: the request numbers from an _IOC helper per architecture
//     family (asm-generic; powerpc and mips) fed with unsafe.Sizeof.
//   - sysfs.go: CA and port enumeration through an fs.FS rooted at "/"
//     (os.DirFS("/") in production, fstest.MapFS in tests) with
//     libibumad's parsing (strtoul base detection, GUID/GID groups,
//     truncation at the buffer size, cut at the last newline) and its
//     default-port rules (Resolve, GetPort).
//   - pairs.go: SMI/GSI pairs (umad_get_smi_gsi_pairs as SMIGSIPairs,
//     umad_get_smi_gsi_pair_by_ca_name as PairByCAName, struct
//     umad_ca_pair as CAPair): a planarized HCA is two or more devices
//     whose ports share one port GUID, the one with IsSMDisabled in its
//     CapabilityMask the GSI side, the other the SMI side; a normal port
//     is its own SMI and GSI. Zero GUIDs and Ethernet ports take no part
//     (rdma-core 01650abb7, #1794); a port named with its device is
//     taken in any state, one picked automatically must be above Down
//     (#1664); MaxDevices (128) and MaxUMADPorts (192) bound the tables
//     as UMAD_MAX_DEVICES and UMAD_MAX_PORTS do (#1672, #1750).
//     Options.SMI is umad_open_smi_port.
//   - port.go: Port, the open fd: OpenPort, Register, Register2,
//     Unregister, Send, Read/Recv, Poll. Device I/O goes through Dev;
//     dev_linux.go opens nodes with os.OpenFile, so the runtime poller
//     owns the fd (read deadlines, Close unblocks a read) and ioctls go
//     through SyscallConn().Control. dev_other.go returns errors wrapping
//     errors.ErrUnsupported.
//   - umadtest: an in-memory model of the kernel's umad behaviour at the
//     fd level, implementing Dev.
//
// # Decisions on the seed man pages (umad-abi.md section 13)
//
//  1. umad_recv's EWOULDBLOCK: Dev.Read blocks in the runtime poller and
//     never returns EAGAIN; Read/Recv report "nothing yet" as
//     os.ErrDeadlineExceeded when the read deadline passes. (syscall.EAGAIN
//     and EWOULDBLOCK are the same value on Linux.)
//  2. Timeouts of the wait: Poll returns an error wrapping
//     syscall.ETIMEDOUT; Read with a deadline returns
//     os.ErrDeadlineExceeded.
//  3. Short buffer: Read refuses a buffer below HeaderSize()+256 with
//     EINVAL before reading, so the record is not stuck at the head.
//  4. ENOSPC: *NoSpaceError carries the needed MAD length; nothing else
//     is overwritten on other errors. Recv grows its buffer and re-reads.
//  5. Errors are Go errors wrapping the errno (errors.Is(err,
//     syscall.ENOSPC)), with the device path.
//  6. Poll on a closed Port returns an error wrapping os.ErrClosed (not 0
//     as umad_poll does for POLLNVAL); POLLERR (agents dead) is an error
//     wrapping EIO.
//  7. Send returns the write's real errno (EINVAL, EIO, ...), not -EIO.
//  8. A negative (sign-bit) timeout waits forever: kept.
//  9. RMPP header: for kernel-RMPP agents only the Active flag matters;
//     for others the whole RMPP header is user data: kept (the kernel's
//     behaviour).
//  10. Default port: NULL CA + port N filters by N, switches resolve to
//     port 0, directory order decides; where libibumad falls back to
//     "mthca0"/1, Resolve returns an error wrapping ErrNoPort (ENODEV).
//  11. PortInfo and CA hold host-order numbers (CapMask, GUIDs, GID
//     prefix), not libibumad's big-endian copies.
//  12. GetPort errors wrap ENODEV (resolution) or EIO (sysfs);
//     ReleasePort always succeeds.
//  13. Register returns the ioctl's real errno, not a blanket EPERM.
//  14. Unregister returns the real errno (EINVAL for an unknown id).
//  15. The header size is per Port (HeaderSize), never process-global;
//     OpenPort always tries ENABLE_PKEY.
//  16. OpenPort opens O_RDWR|O_NONBLOCK|O_CLOEXEC.
//
// Other deviations from libibumad:
//
//   - Register2 falls back to REGISTER_AGENT only on ENOTTY (a kernel
//     before 3.17), not on EINVAL as libibumad does, because on a current
//     kernel EINVAL is the real answer; its RegisterError keeps the flags
//     the kernel wrote back, which libibumad loses.
//   - OpenPort returns the open error itself (EACCES, ENOENT, ENXIO ...)
//     with the device path and, for EACCES, what permission is missing;
//     umad_open_port turns every open failure into -EIO.
//   - CANames and CADeviceList return an empty list when
//     /sys/class/infiniband is missing; umad_get_cas_names invents
//     "mthca0".
//   - SMIGSIPairs leaves the preferred ports 0, as the C function does
//     (its man page says they are the first active ports). PairByCAName
//     fails with ENODEV where no pair matches, as the C code returns
//     -ENODEV (its man page says 1); where C finds no pairs at all and
//     returns 0 with an empty pair, PairByCAName fails with ENODEV too;
//     a port outside C's uint8_t is EINVAL.
//   - Port directories are only indexed 0..9; a P_Key index file beyond
//     the number of P_Key files is skipped where libibumad would write
//     past its array.
//
// # Concurrency
//
// A Port's read side (Read, Recv, Poll, SetReadDeadline) belongs to one
// goroutine; Send, Register and Unregister may run concurrently with it
// and each other; Close may be called from any goroutine.
//
// # Ownership
//
// OpenPort's caller must Close the Port; the Port owns its Dev and closes
// it on every error path of OpenPort.
//
// # Errors
//
// Errors name the device or sysfs file and wrap the os error chain
// (*fs.PathError with the errno), so errors.Is(err, fs.ErrPermission),
// errors.Is(err, syscall.EINVAL) and the like work. An old kernel gives
// *ABIVersionError (EOPNOTSUPP) naming the version read.
package umad
