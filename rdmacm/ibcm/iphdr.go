package ibcm

import (
	"context"
	"encoding/binary"
	"net/netip"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// RDMA CM's IP header in the private data of a REQ or SIDR_REQ of ids with
// IP addresses (IBTA Annex A11; the kernel's struct cma_hdr, which
// cma_format_hdr writes and cma_save_ip_info reads):
//
//	byte 0      version, 0 (CMA_VERSION)
//	byte 1      IP version in the upper nibble: 4 or 6
//	bytes 2-3   the source port (network order)
//	bytes 4-19  the source IP (IPv4: the last 4 bytes, 12 zero bytes first)
//	bytes 20-35 the destination IP
//
// The caller's private data follows: 56 bytes of a REQ's 92, 180 of a
// SIDR_REQ's 216; a CONNECT_REQUEST reports those 56 (180) bytes.
const (
	ipHdrSize  = 36
	cmaVersion = 0
)

// putIPHdr writes the header for a request from src:port to dst.
func putIPHdr(b []byte, src, dst netip.Addr, port uint16) {
	clear(b[:ipHdrSize])
	b[0] = cmaVersion
	put := func(o []byte, a netip.Addr) {
		if a.Is4() {
			v := a.As4()
			copy(o[12:16], v[:])
			return
		}
		v := a.As16()
		copy(o, v[:])
	}
	if src.Is4() {
		b[1] = 4 << 4
	} else {
		b[1] = 6 << 4
	}
	binary.BigEndian.PutUint16(b[2:], port)
	put(b[4:20], src)
	put(b[20:36], dst)
}

// parseIPHdr reads the header: false when b is short, its version is not
// 0 or its IP version neither 4 nor 6 (cma_save_ip_info's -EINVAL and
// -EAFNOSUPPORT).
func parseIPHdr(b []byte) (src, dst netip.Addr, port uint16, ok bool) {
	if len(b) < ipHdrSize || b[0] != cmaVersion {
		return src, dst, 0, false
	}
	port = binary.BigEndian.Uint16(b[2:])
	switch b[1] >> 4 {
	case 4:
		return netip.AddrFrom4([4]byte(b[16:20])), netip.AddrFrom4([4]byte(b[32:36])), port, true
	case 6:
		return netip.AddrFrom16([16]byte(b[4:20])), netip.AddrFrom16([16]byte(b[20:36])), port, true
	}
	return src, dst, 0, false
}

// ipoibAddrs lists the IPoIB addresses the device resolves IP addresses
// through: the fabric's (fabric.IPoIB) and Options.IPoIB.
func (d *Device) ipoibAddrs() []fabric.IPoIBAddr {
	var out []fabric.IPoIBAddr
	if f, ok := d.fab.(fabric.IPoIB); ok {
		out = f.IPoIBAddrs()
	}
	return append(out, d.opts.IPoIB...)
}

// portOfIP finds the fabric's port whose IPoIB interface has ip.
func (d *Device) portOfIP(ctx context.Context, ip netip.Addr) (fabric.PortAttr, bool) {
	ip = ip.Unmap()
	for _, a := range d.ipoibAddrs() {
		if a.IP != ip {
			continue
		}
		ports, err := d.fab.Ports(ctx)
		if err != nil {
			return fabric.PortAttr{}, false
		}
		for _, pa := range ports {
			if pa.CAName == a.CAName && pa.PortNum == a.PortNum {
				return pa, true
			}
		}
	}
	return fabric.PortAttr{}, false
}

// ipOfPort is the first IPoIB address of pa of the family of want (IPv4
// or IPv6).
func (d *Device) ipOfPort(pa fabric.PortAttr, v4 bool) (netip.Addr, bool) {
	for _, a := range d.ipoibAddrs() {
		if a.CAName == pa.CAName && a.PortNum == pa.PortNum && a.IP.Is4() == v4 {
			return a.IP, true
		}
	}
	return netip.Addr{}, false
}

// gidOf is a port's GID.
func gidOf(pa fabric.PortAttr) mad.GID { return mad.NewGID(pa.GIDPrefix, pa.PortGUID) }

// ipFamilyAny is the wildcard address of ip's family.
func ipFamilyAny(v4 bool) netip.Addr {
	if v4 {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}

// matchIPListener reports whether listener l (with IP addresses) takes a
// request whose IP header names dst as its destination, as
// cma_match_private_data: a wildcard AF_INET6 listener (bindv6only 0)
// takes any, an AF_INET one IPv4 only; a bound one its own address.
func matchIPListener(l *kid, dst netip.Addr) bool {
	if l.srcIP.IsUnspecified() && !l.afonly {
		return true
	}
	if l.srcIP.Is4() != dst.Is4() {
		return false
	}
	return l.srcIP.IsUnspecified() || l.srcIP == dst
}
