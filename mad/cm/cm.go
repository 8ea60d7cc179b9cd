// Package cm holds the InfiniBand Communication Management (class 0x07,
// version 2) message codecs: REQ, MRA, REJ, REP, RTU, DREQ, DREP, SIDR_REQ
// and SIDR_REP, each with one layout table (rdmacm-abi.md section 10.2,
// IBA vol. 1 chapter 12), generated with its Go type and zero-allocation
// codec from the schema of mad/internal/madgen (attrs_gen.go). A message is the 232 bytes after the common MAD
// header; NewMAD and Body frame it.
//
// The package does no I/O and starts no goroutines. Codecs are plain values:
// decoding never allocates and never aliases its input (private data is a
// fixed-size array).
package cm

import (
	"fmt"
	"time"

	"github.com/ibscript/ibscript/mad"
)

// Class facts (rdmacm-abi.md section 10.1).
const (
	ClassVersion uint8  = 2          // CM class version
	QKey         uint32 = 0x80010000 // GSI Q_Key
	MsgSize             = mad.Size - mad.HeaderSize
)

// Attribute IDs of the CM class without a codec here (rdmacm-abi.md
// section 10.1); the messages' (AttrREQ ... AttrSIDRRep) are generated
// with their layouts (attrs_gen.go, from mad/internal/madgen's schema).
const (
	AttrClassPortInfo uint16 = 0x0001
	AttrLAP           uint16 = 0x0019
	AttrAPR           uint16 = 0x001A
)

// Private data sizes of each message (rdmacm-abi.md section 10.1).
const (
	REQPrivateData     = 92
	MRAPrivateData     = 222
	REJPrivateData     = 148
	REPPrivateData     = 196
	RTUPrivateData     = 224
	DREQPrivateData    = 220
	DREPPrivateData    = 224
	SIDRReqPrivateData = 216
	SIDRRepPrivateData = 136
)

// MessageMRAed / MessageRejected values.
const (
	MsgREQ   uint8 = 0
	MsgREP   uint8 = 1
	MsgOther uint8 = 2
)

// REJ reasons used by the RDMA CM (rdmacm-abi.md table 10.3).
const (
	RejNoQP             uint16 = 1
	RejNoResources      uint16 = 3
	RejTimeout          uint16 = 4
	RejInvalidCommID    uint16 = 6
	RejInvalidServiceID uint16 = 8
	RejStaleConn        uint16 = 10
	RejConsumerDefined  uint16 = 28
	RejInvalidClassVer  uint16 = 31
	RejVendorOptionNS   uint16 = 35
)

// SIDR_REP statuses.
const (
	SIDRValid          uint8 = 0
	SIDRUnsupportedSID uint8 = 1
	SIDRRejected       uint8 = 2
	SIDRNoQP           uint8 = 3
)

// Transport service types of REQ.TransportServiceType.
const (
	TransportRC uint8 = 0
	TransportUC uint8 = 1
)

// Name returns a message's name ("REQ"), or "0x%04x" for others.
func Name(id uint16) string {
	if l := LayoutByID(id); l != nil {
		return l.Name
	}
	return fmt.Sprintf("0x%04x", id)
}

// NewMAD returns a 256-byte CM MAD (class 0x07 version 2, method Send) of
// attribute id with transaction id tid, and its message part to encode into.
func NewMAD(id uint16, tid uint64) (b, body []byte) {
	b = make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassCM, ClassVersion: ClassVersion,
		Method: mad.MethodSend, TID: tid, AttrID: id}
	h.Put(b)
	return b, b[mad.HeaderSize:]
}

// Body returns the message part of a CM MAD, aliasing b, or an error
// wrapping mad.ErrTruncated.
func Body(b []byte) ([]byte, error) {
	if len(b) < mad.Size {
		return nil, fmt.Errorf("cm: %w (have %d, need %d)", mad.ErrTruncated, len(b), mad.Size)
	}
	return b[mad.HeaderSize:mad.Size], nil
}

// Duration converts a 5-bit CM time value (response timeouts, packet life
// time, ACK timeouts) to a duration: 4.096 us x 2^v.
func Duration(v uint8) time.Duration {
	return time.Duration(4096<<min(v, 31)) * time.Nanosecond
}
