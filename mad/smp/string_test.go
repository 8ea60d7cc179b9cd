package smp_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad/smp"
)

// A decoded attribute prints field by field, as the REPL shows it.
func ExampleNodeInfo_String() {
	ni := &smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: smp.NodeTypeCA, NumPorts: 1,
		SystemImageGUID: 0x0002c90300a00000, NodeGUID: 0x0002c90300a00000, PortGUID: 0x0002c90300a00001,
		PartitionCap: 64, DeviceID: 0x1003, Revision: 0xa1, LocalPortNum: 1, VendorID: 0x2c9}
	fmt.Println(ni)
	// Output:
	// NodeInfo
	//   base_version       1
	//   class_version      1
	//   node_type          1
	//   num_ports          1
	//   system_image_guid  0x0002c90300a00000
	//   node_guid          0x0002c90300a00000
	//   port_guid          0x0002c90300a00001
	//   partition_cap      64
	//   device_id          0x1003
	//   revision           0x000000a1
	//   local_port_num     1
	//   vendor_id          0x0002c9
}

// TestStringMasksKeys: a PortInfo prints every field but its M_Key.
func TestStringMasksKeys(t *testing.T) {
	pi := &smp.PortInfo{MKey: 0x1234567890abcdef, LID: 7}
	s := pi.String()
	if strings.Contains(s, "1234567890abcdef") || !strings.Contains(s, "<masked>") || !strings.Contains(s, "\n  lid ") {
		t.Errorf("PortInfo prints:\n%s", s)
	}
	if got := fmt.Sprintf("%v", pi); got != s {
		t.Errorf("%%v differs from String")
	}
}
