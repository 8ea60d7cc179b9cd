package smp

// MlnxSpeedFDR10 is the FDR10 bit of MlnxExtPortInfo's LinkSpeedSupported,
// LinkSpeedEnabled and LinkSpeedActive.
const MlnxSpeedFDR10 = 1

// MlnxExtPortInfoSupported reports whether a node of this vendor and device
// ID has the MlnxExtPortInfo attribute, as infiniband-diags and
// libibnetdisc decide it (is_mlnx_ext_port_info_supported): Mellanox's
// SwitchX, Switch-IB and ConnectX device IDs whatever the vendor ID, and
// Bull's (vendor 0x119f) rebadged ones.
func MlnxExtPortInfoSupported(vendorID uint32, deviceID uint16) bool {
	switch dev := deviceID; {
	case dev >= 0xc738 && dev <= 0xc73b, dev == 0xc839, dev == 0xcb20, dev == 0xcf08, dev == 0xcf09, dev == 0xd2f0:
		return true
	case dev >= 0x1003 && dev <= 0x101b, dev == 0xa2d2:
		return true
	case vendorID == 0x119f:
		switch dev {
		case 0x1b02, 0x1b50, 0x1ba0, 0x1bf0, 0x1b33, 0x1b73, 0x1b40, 0x1b41, 0x1b60, 0x1b61, 0x1b83, 0x1b93, 0x1b94, 0x1bb4, 0x1bb5:
			return true
		}
		return (dev >= 0x1bd0 && dev <= 0x1bd5) || (dev >= 0x1bc4 && dev <= 0x1bc6)
	}
	return false
}
