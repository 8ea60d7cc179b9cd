package umad

import "unsafe"

// iocLayout is one architecture family's encoding of Linux ioctl request
// numbers (include/uapi/asm-generic/ioctl.h and the powerpc and mips
// overrides): direction bits, where they sit, and how wide the size is.
type iocLayout struct {
	none, write, read uint32 // direction values (_IOC_NONE, _IOC_WRITE, _IOC_READ)
	sizeBits          uint   // _IOC_SIZEBITS
}

var (
	// iocGeneric is asm-generic: x86, arm, arm64, riscv64, s390x, loong64.
	iocGeneric = iocLayout{none: 0, write: 1, read: 2, sizeBits: 14}
	// iocPowerPC is powerpc and mips: three direction bits, 13 size bits.
	iocPowerPC = iocLayout{none: 1, write: 4, read: 2, sizeBits: 13}
)

// ioc is _IOC(dir, typ, nr, size).
func (l iocLayout) ioc(dir uint32, typ, nr uint8, size uintptr) uint32 {
	const nrBits, typeBits = 8, 8
	sizeShift := uint(nrBits + typeBits)
	dirShift := sizeShift + l.sizeBits
	return dir<<dirShift | uint32(size)<<sizeShift | uint32(typ)<<nrBits | uint32(nr)
}

func (l iocLayout) io(typ, nr uint8) uint32 { return l.ioc(l.none, typ, nr, 0) }
func (l iocLayout) iow(typ, nr uint8, size uintptr) uint32 {
	return l.ioc(l.write, typ, nr, size)
}
func (l iocLayout) iowr(typ, nr uint8, size uintptr) uint32 {
	return l.ioc(l.read|l.write, typ, nr, size)
}

// rdmaIoctlMagic is RDMA_IOCTL_MAGIC of rdma/rdma_user_ioctl_cmds.h.
const rdmaIoctlMagic = 0x1b

// Requests holds the four umad ioctl numbers of one architecture.
type Requests struct {
	RegisterAgent   uint32 // IB_USER_MAD_REGISTER_AGENT: _IOWR(0x1b, 1, struct ib_user_mad_reg_req)
	UnregisterAgent uint32 // IB_USER_MAD_UNREGISTER_AGENT: _IOW(0x1b, 2, __u32)
	EnablePKey      uint32 // IB_USER_MAD_ENABLE_PKEY: _IO(0x1b, 3)
	RegisterAgent2  uint32 // IB_USER_MAD_REGISTER_AGENT2: _IOWR(0x1b, 4, struct ib_user_mad_reg_req2)
}

func (l iocLayout) requests() Requests {
	return Requests{
		RegisterAgent:   l.iowr(rdmaIoctlMagic, 1, unsafe.Sizeof(regReqC{})),
		UnregisterAgent: l.iow(rdmaIoctlMagic, 2, unsafe.Sizeof(uint32(0))),
		EnablePKey:      l.io(rdmaIoctlMagic, 3),
		RegisterAgent2:  l.iowr(rdmaIoctlMagic, 4, unsafe.Sizeof(regReq2C{})),
	}
}

// Req returns the ioctl numbers of the architecture this binary runs on.
func Req() Requests { return reqs }

var reqs = iocArch.requests()

// regReqC has the size and alignment of struct ib_user_mad_reg_req; it
// exists only for unsafe.Sizeof (encoding goes through RegReq.Put). The
// kernel's method_mask is unsigned long[128/bits], 16 bytes on every
// architecture, 4-byte aligned here because the struct has no 8-byte field
// before it on 32-bit and the kernel declares it after a __u32 (offset 4)
// on 64-bit: the C struct is 28 bytes everywhere.
type regReqC struct {
	id         uint32
	methodMask [4]uint32
	qpn        uint8
	mgmtClass  uint8
	version    uint8
	oui        [3]uint8
	rmpp       uint8
	_          uint8
}

// regReq2C has the size of struct ib_user_mad_reg_req2 (40 bytes).
type regReq2C struct {
	id         uint32
	qpn        uint32
	mgmtClass  uint8
	version    uint8
	res        uint16
	flags      uint32
	methodMask [2]uint64
	oui        uint32
	rmpp       uint8
	reserved   [3]uint8
}
