package main

import (
	"slices"

	"github.com/ibscript/ibscript/mad"
)

// Communication Management messages (class 0x07, version 2):
// rdmacm-abi.md section 10.2, IBA vol. 1 chapter 12. Each is the 232 bytes
// after the common MAD header (bits from MAD byte 24); one-bit rows are
// uint8 and GIDs [16]byte, as the hand-written codecs these replaced had
// them.
func cmAttrs() []*Attr {
	return slices.Concat(cmFromREQ(), cmFromREJ(), cmFromSIDRREQ())
}

// cmFromREQ is the cm schema from REQ on (part of cmAttrs).
func cmFromREQ() []*Attr {
	return []*Attr{
		{
			Pkg: "cm", Name: "REQ", ID: 0x0010, Size: 232, Prefix: "req", Type: "REQ",
			Mod: "none (0)",
			Doc: "REQ is the CM REQ message (attribute 0x0010): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "LocalCommID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "VendorID", Bit: 40, Width: 24, Kind: mad.Hex},
				{Name: "ServiceID", Bit: 64, Width: 64, Kind: mad.Hex},
				{Name: "LocalCAGUID", Bit: 128, Width: 64, Kind: mad.Hex},
				{Name: "LocalQKey", Bit: 224, Width: 32, Kind: mad.Hex},
				{Name: "LocalQPN", Bit: 256, Width: 24, Kind: mad.Hex},
				{Name: "ResponderResources", Bit: 280, Width: 8},
				{Name: "LocalEECN", Bit: 288, Width: 24, Kind: mad.Hex},
				{Name: "InitiatorDepth", Bit: 312, Width: 8},
				{Name: "RemoteEECN", Bit: 320, Width: 24, Kind: mad.Hex},
				{Name: "RemoteCMResponseTimeout", Bit: 344, Width: 5},
				{Name: "TransportServiceType", Bit: 349, Width: 2},
				{Name: "EndToEndFlowControl", Bit: 351, Width: 1, Type: "uint8"},
				{Name: "StartingPSN", Bit: 352, Width: 24, Kind: mad.Hex},
				{Name: "LocalCMResponseTimeout", Bit: 376, Width: 5},
				{Name: "RetryCount", Bit: 381, Width: 3},
				{Name: "PartitionKey", Bit: 384, Width: 16, Kind: mad.Hex, Go: "PKey"},
				{Name: "PathMTU", Bit: 400, Width: 4},
				{Name: "RDCExists", Bit: 404, Width: 1, Type: "uint8"},
				{Name: "RNRRetryCount", Bit: 405, Width: 3},
				{Name: "MaxCMRetries", Bit: 408, Width: 4},
				{Name: "SRQ", Bit: 412, Width: 1, Type: "uint8"},
				{Name: "ExtendedTransportType", Bit: 413, Width: 3},
				{Name: "PrimaryLocalLID", Bit: 416, Width: 16},
				{Name: "PrimaryRemoteLID", Bit: 432, Width: 16},
				{Name: "PrimaryLocalGID", Bit: 448, Width: 128, Kind: mad.Bytes, Type: "[16]byte"},
				{Name: "PrimaryRemoteGID", Bit: 576, Width: 128, Kind: mad.Bytes, Type: "[16]byte"},
				{Name: "PrimaryFlowLabel", Bit: 704, Width: 20, Kind: mad.Hex},
				{Name: "PrimaryPacketRate", Bit: 730, Width: 6},
				{Name: "PrimaryTrafficClass", Bit: 736, Width: 8},
				{Name: "PrimaryHopLimit", Bit: 744, Width: 8},
				{Name: "PrimarySL", Bit: 752, Width: 4},
				{Name: "PrimarySubnetLocal", Bit: 756, Width: 1, Type: "uint8"},
				{Name: "PrimaryLocalACKTimeout", Bit: 760, Width: 5},
				{Name: "AlternateLocalLID", Bit: 768, Width: 16},
				{Name: "AlternateRemoteLID", Bit: 784, Width: 16},
				{Name: "AlternateLocalGID", Bit: 800, Width: 128, Kind: mad.Bytes, Type: "[16]byte"},
				{Name: "AlternateRemoteGID", Bit: 928, Width: 128, Kind: mad.Bytes, Type: "[16]byte"},
				{Name: "AlternateFlowLabel", Bit: 1056, Width: 20, Kind: mad.Hex},
				{Name: "AlternatePacketRate", Bit: 1082, Width: 6},
				{Name: "AlternateTrafficClass", Bit: 1088, Width: 8},
				{Name: "AlternateHopLimit", Bit: 1096, Width: 8},
				{Name: "AlternateSL", Bit: 1104, Width: 4},
				{Name: "AlternateSubnetLocal", Bit: 1108, Width: 1, Type: "uint8"},
				{Name: "AlternateLocalACKTimeout", Bit: 1112, Width: 5},
				{Name: "SAPSupported", Bit: 1117, Width: 1, Type: "uint8"},
				{Name: "PrivateData", Bit: 1120, Width: 736, Kind: mad.Bytes},
			},
		},
		{
			Pkg: "cm", Name: "MRA", ID: 0x0011, Size: 232, Prefix: "mra", Type: "MRA",
			Mod: "none (0)",
			Doc: "MRA is the CM MRA message (attribute 0x0011): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "LocalCommID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "RemoteCommID", Bit: 32, Width: 32, Kind: mad.Hex},
				{Name: "MessageMRAed", Bit: 64, Width: 2},
				{Name: "ServiceTimeout", Bit: 72, Width: 5},
				{Name: "PrivateData", Bit: 80, Width: 1776, Kind: mad.Bytes},
			},
		},
	}
}

// cmFromREJ is the cm schema from REJ on (part of cmAttrs).
func cmFromREJ() []*Attr {
	return []*Attr{
		{
			Pkg: "cm", Name: "REJ", ID: 0x0012, Size: 232, Prefix: "rej", Type: "REJ",
			Mod: "none (0)",
			Doc: "REJ is the CM REJ message (attribute 0x0012): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "LocalCommID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "RemoteCommID", Bit: 32, Width: 32, Kind: mad.Hex},
				{Name: "MessageRejected", Bit: 64, Width: 2},
				{Name: "RejectInfoLength", Bit: 72, Width: 7},
				{Name: "Reason", Bit: 80, Width: 16},
				{Name: "ARI", Bit: 96, Width: 576, Kind: mad.Bytes},
				{Name: "PrivateData", Bit: 672, Width: 1184, Kind: mad.Bytes},
			},
		},
		{
			Pkg: "cm", Name: "REP", ID: 0x0013, Size: 232, Prefix: "rep", Type: "REP",
			Mod: "none (0)",
			Doc: "REP is the CM REP message (attribute 0x0013): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "LocalCommID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "RemoteCommID", Bit: 32, Width: 32, Kind: mad.Hex},
				{Name: "LocalQKey", Bit: 64, Width: 32, Kind: mad.Hex},
				{Name: "LocalQPN", Bit: 96, Width: 24, Kind: mad.Hex},
				{Name: "LocalEECN", Bit: 128, Width: 24, Kind: mad.Hex},
				{Name: "StartingPSN", Bit: 160, Width: 24, Kind: mad.Hex},
				{Name: "ResponderResources", Bit: 192, Width: 8},
				{Name: "InitiatorDepth", Bit: 200, Width: 8},
				{Name: "TargetACKDelay", Bit: 208, Width: 5},
				{Name: "FailoverAccepted", Bit: 213, Width: 2},
				{Name: "EndToEndFlowControl", Bit: 215, Width: 1, Type: "uint8"},
				{Name: "RNRRetryCount", Bit: 216, Width: 3},
				{Name: "SRQ", Bit: 219, Width: 1, Type: "uint8"},
				{Name: "LocalCAGUID", Bit: 224, Width: 64, Kind: mad.Hex},
				{Name: "PrivateData", Bit: 288, Width: 1568, Kind: mad.Bytes},
			},
		},
		{
			Pkg: "cm", Name: "RTU", ID: 0x0014, Size: 232, Prefix: "rtu", Type: "RTU",
			Mod: "none (0)",
			Doc: "RTU is the CM RTU message (attribute 0x0014): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "LocalCommID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "RemoteCommID", Bit: 32, Width: 32, Kind: mad.Hex},
				{Name: "PrivateData", Bit: 64, Width: 1792, Kind: mad.Bytes},
			},
		},
		{
			Pkg: "cm", Name: "DREQ", ID: 0x0015, Size: 232, Prefix: "dreq", Type: "DREQ",
			Mod: "none (0)",
			Doc: "DREQ is the CM DREQ message (attribute 0x0015): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "LocalCommID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "RemoteCommID", Bit: 32, Width: 32, Kind: mad.Hex},
				{Name: "RemoteQPN", Bit: 64, Width: 24, Kind: mad.Hex},
				{Name: "PrivateData", Bit: 96, Width: 1760, Kind: mad.Bytes},
			},
		},
		{
			Pkg: "cm", Name: "DREP", ID: 0x0016, Size: 232, Prefix: "drep", Type: "DREP",
			Mod: "none (0)",
			Doc: "DREP is the CM DREP message (attribute 0x0016): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "LocalCommID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "RemoteCommID", Bit: 32, Width: 32, Kind: mad.Hex},
				{Name: "PrivateData", Bit: 64, Width: 1792, Kind: mad.Bytes},
			},
		},
	}
}

// cmFromSIDRREQ is the cm schema from SIDRREQ on (part of cmAttrs).
func cmFromSIDRREQ() []*Attr {
	return []*Attr{
		{
			Pkg: "cm", Name: "SIDR_REQ", ID: 0x0017, Size: 232, Prefix: "sidrreq", Type: "SIDRReq", Const: "AttrSIDRReq", Layout: "SIDRReqLayout",
			Mod: "none (0)",
			Doc: "SIDRReq is the CM SIDR_REQ message (attribute 0x0017): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "RequestID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "PartitionKey", Bit: 32, Width: 16, Kind: mad.Hex, Go: "PKey"},
				{Name: "ServiceID", Bit: 64, Width: 64, Kind: mad.Hex},
				{Name: "PrivateData", Bit: 128, Width: 1728, Kind: mad.Bytes},
			},
		},
		{
			Pkg: "cm", Name: "SIDR_REP", ID: 0x0018, Size: 232, Prefix: "sidrrep", Type: "SIDRRep", Const: "AttrSIDRRep", Layout: "SIDRRepLayout",
			Mod: "none (0)",
			Doc: "SIDRRep is the CM SIDR_REP message (attribute 0x0018): the 232 bytes after the common MAD header.",
			Fields: []Field{
				{Name: "RequestID", Bit: 0, Width: 32, Kind: mad.Hex},
				{Name: "Status", Bit: 32, Width: 8},
				{Name: "AdditionalInfoLength", Bit: 40, Width: 8},
				{Name: "QPN", Bit: 64, Width: 24, Kind: mad.Hex},
				{Name: "ServiceID", Bit: 96, Width: 64, Kind: mad.Hex},
				{Name: "QKey", Bit: 160, Width: 32, Kind: mad.Hex},
				{Name: "AdditionalInfo", Bit: 192, Width: 576, Kind: mad.Bytes},
				{Name: "PrivateData", Bit: 768, Width: 1088, Kind: mad.Bytes},
			},
		},
	}
}
