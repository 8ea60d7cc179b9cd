package rdmacm

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
)

func checkLayout(t *testing.T, name string, l []abiField, total int) {
	t.Helper()
	end := 0
	for _, f := range l {
		if f.Offset != end {
			t.Errorf("%s.%s at %d, want %d (gap or overlap)", name, f.Name, f.Offset, end)
		}
		end = f.Offset + f.Size
	}
	if end != total {
		t.Errorf("%s ends at %d, want %d", name, end, total)
	}
}

// TestLayouts checks every table against the sizes of rdmacm-abi.md
// section 4 (compiled from the kernel header on x86_64).
func TestLayouts(t *testing.T) {
	for _, c := range []struct {
		name  string
		l     []abiField
		total int
	}{
		{"rdma_ucm_cmd_hdr", headerLayout, 8},
		{"rdma_ucm_create_id", createIDLayout, 24},
		{"rdma_ucm_destroy_id", destroyIDLayout, 16},
		{"rdma_ucm_get_event", getEventLayout, 8},
		{"rdma_ucm_migrate_id", migrateIDLayout, 16},
		{"rdma_ucm_listen", listenLayout, 8},
		{"rdma_ucm_resolve_route", resolveRouteLayout, 8},
		{"rdma_ucm_disconnect", disconnectLayout, 4},
		{"rdma_ucm_conn_param", connParamLayout, 272},
		{"rdma_ucm_ud_param", udParamLayout, 304},
		{"ib_uverbs_ah_attr", ahAttrLayout, 32},
		{"rdma_ucm_event_resp", eventRespLayout, 336},
		{"rdma_ucm_connect", connectLayout, 288},
		{"rdma_ucm_accept", acceptLayout, 296},
		{"rdma_ucm_reject", rejectLayout, 264},
		{"rdma_ucm_bind", bindLayout, 136},
		{"rdma_ucm_resolve_addr", resolveAddrLayout, 272},
		{"sockaddr_ib", sockaddrIBLayout, 48},
		{"sockaddr_in", sockaddrInLayout, 16},
		{"sockaddr_in6", sockaddrIn6Layout, 28},
		{"rdma_ucm_query", queryLayout, 16},
		{"rdma_ucm_query_addr_resp", queryAddrRespLayout, 280},
	} {
		checkLayout(t, c.name, c.l, c.total)
	}
	// The event's param union: conn is the smaller member.
	if f := field(eventRespLayout, "param"); f.Size != UDParamSize || ConnParamSize > f.Size {
		t.Errorf("param union %d bytes", f.Size)
	}
	if field(eventRespLayout, "reserved").Offset != EventRespMinSize {
		t.Error("the 324-byte minimum is the old struct's end")
	}
}

// TestCommandSizes: each command's in is its struct size, and commands
// with a response carry its address at the struct's response field.
func TestCommandSizes(t *testing.T) {
	pd := &ConnParam{}
	for _, c := range []struct {
		name    string
		c       Command
		cmd     uint32
		in, out int
		respOff int
	}{
		{"CREATE_ID", CreateIDCmd(1, PSTCP, QPTypeRC), 0, 24, 4, 8},
		{"DESTROY_ID", DestroyIDCmd(1), 1, 16, 4, 0},
		{"RESOLVE_ROUTE", ResolveRouteCmd(1, 100), 4, 8, 0, -1},
		{"CONNECT", ConnectCmd(1, pd), 6, 288, 0, -1},
		{"LISTEN", ListenCmd(1, 5), 7, 8, 0, -1},
		{"ACCEPT", AcceptCmd(1, 9, pd), 8, 296, 0, -1},
		{"REJECT", RejectCmd(1, nil), 9, 264, 0, -1},
		{"DISCONNECT", DisconnectCmd(1), 10, 4, 0, -1},
		{"GET_EVENT", GetEventCmd(), 12, 8, 336, 0},
		{"MIGRATE_ID", MigrateIDCmd(1, 5), 18, 16, 4, 0},
		{"BIND", BindCmd(1, nil), 20, 136, 0, -1},
		{"RESOLVE_ADDR", ResolveAddrCmd(1, nil, nil, 0), 21, 272, 0, -1},
		{"QUERY", QueryAddrCmd(1), 19, 16, 280, 0},
	} {
		if c.c.Cmd() != c.cmd || c.c.In() != c.in || c.c.Out() != c.out || len(c.c.B) != 8+c.in {
			t.Errorf("%s: cmd %d in %d out %d len %d, want %d %d %d %d", c.name, c.c.Cmd(), c.c.In(), c.c.Out(), len(c.c.B), c.cmd, c.in, c.out, 8+c.in)
		}
		want := c.respOff
		if want >= 0 {
			want += HeaderSize
		}
		if c.c.RespOff != want {
			t.Errorf("%s: response at %d, want %d", c.name, c.c.RespOff, want)
		}
	}
}

// TestCreateIDGolden is rdmacm-abi.md section 12.1: CREATE_ID with uid 7,
// port space TCP and QP type RC, on a little-endian host.
func TestCreateIDGolden(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the golden bytes are little-endian")
	}
	c := CreateIDCmd(7, PSTCP, QPTypeRC)
	want, _ := hex.DecodeString("00000000" + "1800" + "0400" + "0700000000000000" + "0000000000000000" + "0601" + "02" + "0000000000")
	if !bytes.Equal(c.B, want) {
		t.Errorf("CREATE_ID:\n%s\nwant:\n%s", hex.Dump(c.B), hex.Dump(want))
	}
	m := MigrateIDCmd(0x11, 4)
	want, _ = hex.DecodeString("12000000" + "1000" + "0400" + "0000000000000000" + "11000000" + "04000000")
	if !bytes.Equal(m.B, want) {
		t.Errorf("MIGRATE_ID:\n%s\nwant:\n%s", hex.Dump(m.B), hex.Dump(want))
	}
}

func TestEventRoundTrip(t *testing.T) {
	e := Event{UID: 0x1122334455667788, ID: 9, Event: 4, Status: -110}
	e.Conn.PrivateData = []byte("abc")
	e.Conn.put(e.Raw[:])
	e.Conn.ResponderResources = 0
	b := make([]byte, EventRespSize)
	PutEvent(b, &e)
	if got := binary.NativeEndian.Uint32(b[16:]); int32(got) != -110 {
		t.Errorf("status %d", int32(got))
	}
	got, err := ParseEvent(b[:EventRespMinSize])
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != e.UID || got.ID != 9 || got.Event != 4 || got.Status != -110 || string(got.Conn.PrivateData) != "abc" {
		t.Errorf("%+v", got)
	}
	if _, err := ParseEvent(b[:100]); err == nil {
		t.Error("short event: no error")
	}
	sa := SockaddrIB([16]byte{0xfe, 0x80, 15: 1}, 0xffff, 0x1061d2f)
	if len(sa) != 48 || sa[0] != AF_IB || sa[2] != 0xff || sa[8] != 0xfe || sa[31] != 0x2f {
		t.Errorf("sockaddr_ib % x", sa)
	}
}

// TestQueryAddrAndUDRoundTrip: QUERY_ADDR answers and the ud member of the
// event param decode what the kernel writes.
func TestQueryAddrAndUDRoundTrip(t *testing.T) {
	src := SockaddrIB([16]byte{0xfe, 0x80, 15: 2}, 0xffff, 0x1061d2f)
	dst := SockaddrIB([16]byte{0xfe, 0x80, 15: 3}, 0x8001, 0)
	b := make([]byte, QueryAddrRespSize)
	PutAddrInfo(b, &AddrInfo{NodeGUID: 0x1122, PortNum: 1, PKey: 0xffff, Src: src, Dst: dst})
	if got := binary.NativeEndian.Uint16(b[12:]); got != SockaddrIBSize {
		t.Errorf("src_size %d", got)
	}
	a, err := ParseAddrInfo(b[:QueryAddrRespMinSize])
	if err != nil {
		t.Fatal(err)
	}
	gid, pkey, sid, ok := ParseSockaddrIB(a.Src)
	if !ok || a.NodeGUID != 0x1122 || a.PortNum != 1 || gid[15] != 2 || pkey != 0xffff || sid != 0x1061d2f {
		t.Errorf("src %+v: gid % x pkey %#x sid %#x ok %v", a, gid, pkey, sid, ok)
	}
	if _, pkey, sid, ok := ParseSockaddrIB(a.Dst); !ok || pkey != 0x8001 || sid != 0 {
		t.Errorf("dst pkey %#x sid %#x", pkey, sid)
	}
	if _, err := ParseAddrInfo(b[:100]); err == nil {
		t.Error("short answer: no error")
	}
	if _, _, _, ok := ParseSockaddrIB(make([]byte, 48)); ok {
		t.Error("family 0 parsed as AF_IB")
	}
	e := Event{ID: 3, Event: 9}
	PutUDParam(e.Raw[:], &UDParam{QPNum: 0x4242, QKey: 0x01234567, PrivateData: []byte("ud")})
	ev := make([]byte, EventRespSize)
	PutEvent(ev, &e)
	got, err := ParseEvent(ev)
	if err != nil || got.UD.QPNum != 0x4242 || got.UD.QKey != 0x01234567 || string(got.UD.PrivateData) != "ud" {
		t.Errorf("ud param %+v %v", got.UD, err)
	}
}

// TestSockaddrIPGolden: struct sockaddr_in for 10.0.0.1:7471 and struct
// sockaddr_in6 for [fd00::1]:7471 as a C caller of rdma_bind_addr fills
// them (family host order, port and address network order), and BIND
// framing them with their own sizes.
func TestSockaddrIPGolden(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("golden bytes are for little-endian hosts")
	}
	v4 := SockaddrIP(netip.MustParseAddr("10.0.0.1"), 7471)
	if want := unhexRDMA(t, "0200 1d2f 0a000001 0000000000000000"); !bytes.Equal(v4, want) {
		t.Errorf("sockaddr_in:\n%s\nwant:\n%s", hex.Dump(v4), hex.Dump(want))
	}
	v6 := SockaddrIP(netip.MustParseAddr("fd00::1"), 7471)
	if want := unhexRDMA(t, "0a00 1d2f 00000000 fd000000000000000000000000000001 00000000"); !bytes.Equal(v6, want) {
		t.Errorf("sockaddr_in6:\n%s\nwant:\n%s", hex.Dump(v6), hex.Dump(want))
	}
	if m := SockaddrIP(netip.MustParseAddr("::ffff:10.0.0.1"), 7471); !bytes.Equal(m, v4) {
		t.Errorf("an IPv4-mapped address is not sockaddr_in: % x", m)
	}
	for _, c := range []struct {
		b    []byte
		ip   string
		port uint16
	}{{v4, "10.0.0.1", 7471}, {v6, "fd00::1", 7471}} {
		ip, port, ok := ParseSockaddrIP(c.b)
		if !ok || ip.String() != c.ip || port != c.port {
			t.Errorf("parse % x = %v %d %v", c.b, ip, port, ok)
		}
	}
	if _, _, ok := ParseSockaddrIP(v6[:20]); ok {
		t.Error("short sockaddr_in6 parsed")
	}
	if _, _, ok := ParseSockaddrIP(SockaddrIB([16]byte{}, 0xffff, 0)); ok {
		t.Error("sockaddr_ib parsed as IP")
	}
	c := BindCmd(5, v6)
	b := c.Body()
	if got := binary.NativeEndian.Uint16(b[field(bindLayout, "addr_size").Offset:]); got != SockaddrIn6Size {
		t.Errorf("BIND addr_size %d, want 28", got)
	}
	if !bytes.Equal(b[field(bindLayout, "addr").Offset:][:SockaddrIn6Size], v6) {
		t.Error("BIND does not carry the sockaddr_in6")
	}
}

func unhexRDMA(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
