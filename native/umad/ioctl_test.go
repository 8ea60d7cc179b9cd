package umad

import (
	"runtime"
	"testing"
	"unsafe"
)

// The values of include/uapi/rdma/ib_user_mad.h's requests:
//
//	#define IB_USER_MAD_REGISTER_AGENT	_IOWR(RDMA_IOCTL_MAGIC, 0x01, struct ib_user_mad_reg_req)
//	#define IB_USER_MAD_UNREGISTER_AGENT	_IOW(RDMA_IOCTL_MAGIC, 0x02, __u32)
//	#define IB_USER_MAD_ENABLE_PKEY		_IO(RDMA_IOCTL_MAGIC, 0x03)
//	#define IB_USER_MAD_REGISTER_AGENT2	_IOWR(RDMA_IOCTL_MAGIC, 0x04, struct ib_user_mad_reg_req2)
func TestRequestNumbers(t *testing.T) {
	tests := []struct {
		name   string
		layout iocLayout
		want   Requests
	}{
		// asm-generic/ioctl.h: amd64, arm64, riscv64, s390x, loong64, 386, arm.
		{"generic", iocGeneric, Requests{0xC01C1B01, 0x40041B02, 0x00001B03, 0xC0281B04}},
		// powerpc/include/uapi/asm/ioctl.h: _IOC_NONE 1, _IOC_WRITE 4,
		// _IOC_READ 2, 13 size bits (mips: the same).
		{"powerpc", iocPowerPC, Requests{0xC01C1B01, 0x80041B02, 0x20001B03, 0xC0281B04}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.layout.requests(); got != tt.want {
				t.Errorf("requests() = %#x, want %#x", got, tt.want)
			}
		})
	}
	want := map[string]iocLayout{"amd64": iocGeneric, "arm64": iocGeneric, "386": iocGeneric, "arm": iocGeneric,
		"riscv64": iocGeneric, "s390x": iocGeneric, "loong64": iocGeneric, "ppc64": iocPowerPC, "ppc64le": iocPowerPC,
		"mips": iocPowerPC, "mipsle": iocPowerPC, "mips64": iocPowerPC, "mips64le": iocPowerPC}
	if w, ok := want[runtime.GOARCH]; ok && iocArch != w {
		t.Errorf("GOARCH %s uses %+v, want %+v", runtime.GOARCH, iocArch, w)
	}
	if Req() != iocArch.requests() {
		t.Errorf("Req = %#x, want %#x", Req(), iocArch.requests())
	}
}

func TestStructSizes(t *testing.T) {
	if s := unsafe.Sizeof(regReqC{}); s != RegReqSize {
		t.Errorf("sizeof(ib_user_mad_reg_req) = %d, want %d", s, RegReqSize)
	}
	if s := unsafe.Sizeof(regReq2C{}); s != RegReq2Size {
		t.Errorf("sizeof(ib_user_mad_reg_req2) = %d, want %d", s, RegReq2Size)
	}
	if o := unsafe.Offsetof(regReqC{}.qpn); o != 20 {
		t.Errorf("offsetof(reg_req.qpn) = %d, want 20", o)
	}
	if o := unsafe.Offsetof(regReq2C{}.methodMask); o != 16 {
		t.Errorf("offsetof(reg_req2.method_mask) = %d, want 16", o)
	}
	if o := unsafe.Offsetof(regReq2C{}.oui); o != 32 {
		t.Errorf("offsetof(reg_req2.oui) = %d, want 32", o)
	}
}
