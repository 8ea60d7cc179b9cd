//go:build ppc64 || ppc64le || mips || mipsle || mips64 || mips64le

package umad

var iocArch = iocPowerPC
