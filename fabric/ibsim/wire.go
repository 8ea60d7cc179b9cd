package ibsim

import (
	"encoding/binary"
	"fmt"

	"github.com/ibscript/ibscript/mad"
)

// Sizes and constants of ibsim's client protocol (ibsim's ibsim/sim.h:
// struct sim_ctl, struct sim_request, the SIM_CTL_* commands).
const (
	ctlSize     = 80         // struct sim_ctl
	ctlDataSize = 64         // sim_ctl.data
	requestSize = 288        // struct sim_request, 64-bit layout
	ctlMagic    = 0xdeadbeef // sim_ctl.magic
	maxClients  = 10         // IBSIM_MAX_CLIENTS, fabric-wide
	nodeIDSize  = 32         // sim_client_info.nodeid, NUL included

	// statusDropped is sim_request.status of a packet ibsim could not
	// route or deliver: the sender's own packet comes back with it.
	statusDropped = 110
)

// Control request types (sim_ctl.type).
const (
	ctlError       = 0
	ctlConnect     = 1
	ctlDisconnect  = 2
	ctlGetPort     = 3
	ctlGetVendor   = 4
	ctlGetGID      = 5
	ctlGetGUID     = 6
	ctlGetNodeInfo = 7
	ctlGetPortInfo = 8
	ctlSetISSM     = 9
	ctlGetPKeys    = 10
)

// simCtl is struct sim_ctl. Every integer is in host byte order, which this
// package takes to be little-endian (ibsim runs on the same host, or a host
// of the same endianness in UDP mode).
type simCtl struct {
	Magic    uint32 // offset 0
	ClientID uint32 // offset 4: the slot (ignored by CONNECT)
	Type     uint32 // offset 8: request; 0 in a refusal
	Len      uint32 // offset 12: payload length (ibsim ignores it)
	Data     [ctlDataSize]byte
}

// Marshal encodes c into 80 bytes.
func (c *simCtl) Marshal() []byte {
	b := make([]byte, ctlSize)
	binary.LittleEndian.PutUint32(b[0:], c.Magic)
	binary.LittleEndian.PutUint32(b[4:], c.ClientID)
	binary.LittleEndian.PutUint32(b[8:], c.Type)
	binary.LittleEndian.PutUint32(b[12:], c.Len)
	copy(b[16:], c.Data[:])
	return b
}

// Unmarshal decodes an 80-byte sim_ctl.
func (c *simCtl) Unmarshal(b []byte) error {
	if len(b) != ctlSize {
		return fmt.Errorf("ibsim: control reply of %d bytes, want %d", len(b), ctlSize)
	}
	c.Magic = binary.LittleEndian.Uint32(b[0:])
	c.ClientID = binary.LittleEndian.Uint32(b[4:])
	c.Type = binary.LittleEndian.Uint32(b[8:])
	c.Len = binary.LittleEndian.Uint32(b[12:])
	copy(c.Data[:], b[16:])
	return nil
}

// clientInfo is struct sim_client_info (44 bytes), the CONNECT payload.
type clientInfo struct {
	ID     uint32 // offset 0: client ID in; slot out
	QP     uint32 // offset 4: QP > 1 this client serves, 0 for none
	ISSM   uint32 // offset 8: 1 = receive QP0/QP1 requests for the port
	NodeID string // offset 12, 32 bytes NUL-terminated: node id or description in; attached node id out
}

// clientInfoSize is the encoded size of a clientInfo.
const clientInfoSize = 12 + nodeIDSize

// Put encodes ci into b (at least 44 bytes).
func (ci *clientInfo) Put(b []byte) error {
	if len(ci.NodeID) >= nodeIDSize {
		return fmt.Errorf("ibsim: node name %q is longer than %d bytes (ibsim's limit; use a shorter node description)", ci.NodeID, nodeIDSize-1)
	}
	binary.LittleEndian.PutUint32(b[0:], ci.ID)
	binary.LittleEndian.PutUint32(b[4:], ci.QP)
	binary.LittleEndian.PutUint32(b[8:], ci.ISSM)
	clear(b[12 : 12+nodeIDSize])
	copy(b[12:], ci.NodeID)
	return nil
}

// Get decodes ci from b.
func (ci *clientInfo) Get(b []byte) {
	ci.ID = binary.LittleEndian.Uint32(b[0:])
	ci.QP = binary.LittleEndian.Uint32(b[4:])
	ci.ISSM = binary.LittleEndian.Uint32(b[8:])
	ci.NodeID = string(mad.TrimNUL(b[12 : 12+nodeIDSize]))
}

// simRequest is struct sim_request: one MAD with its addressing. On a 64-bit
// host the C struct has 4 bytes of padding after status, before the
// 8-byte-aligned length.
type simRequest struct {
	DLID   uint16 // offset 0: big-endian in the first 2 bytes of a u32
	SLID   uint16 // offset 4: likewise; 0 = ibsim fills in the port's LID
	DQP    uint32 // offset 8, big-endian
	SQP    uint32 // offset 12, big-endian
	Status uint32 // offset 16, big-endian: 0 or statusDropped
	// offset 20: 4 bytes padding
	Length uint64         // offset 24, big-endian: valid MAD bytes
	MAD    [mad.Size]byte // offset 32
}

// Put encodes r into b (RequestSize bytes).
func (r *simRequest) Put(b []byte) {
	_ = b[requestSize-1]
	clear(b[:32])
	binary.BigEndian.PutUint16(b[0:], r.DLID)
	binary.BigEndian.PutUint16(b[4:], r.SLID)
	binary.BigEndian.PutUint32(b[8:], r.DQP)
	binary.BigEndian.PutUint32(b[12:], r.SQP)
	binary.BigEndian.PutUint32(b[16:], r.Status)
	binary.BigEndian.PutUint64(b[24:], r.Length)
	copy(b[32:], r.MAD[:])
}

// Get decodes a RequestSize-byte datagram into r.
func (r *simRequest) Get(b []byte) error {
	if len(b) != requestSize {
		return fmt.Errorf("ibsim: data packet of %d bytes, want %d", len(b), requestSize)
	}
	r.DLID = binary.BigEndian.Uint16(b[0:])
	r.SLID = binary.BigEndian.Uint16(b[4:])
	r.DQP = binary.BigEndian.Uint32(b[8:])
	r.SQP = binary.BigEndian.Uint32(b[12:])
	r.Status = binary.BigEndian.Uint32(b[16:])
	r.Length = binary.BigEndian.Uint64(b[24:])
	copy(r.MAD[:], b[32:])
	return nil
}
