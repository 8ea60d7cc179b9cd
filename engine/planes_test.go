package engine

import (
	"slices"
	"testing"

	"github.com/ibscript/ibscript/fabric"
)

// TestPlaneNumbers: the SMI plane ports of one device (the kernel's one
// SMI sub device of a planarized HCA) are numbered by port, port N plane
// N; spread over several devices, each from its port 1, they are numbered
// 1, 2, ... by device name (libibumad's alphasort order: "mlx5_10" before
// "mlx5_9") and port, whatever order they come in.
func TestPlaneNumbers(t *testing.T) {
	ports := func(names ...any) []fabric.PortAttr {
		var out []fabric.PortAttr
		for i := 0; i < len(names); i += 2 {
			out = append(out, fabric.PortAttr{CAName: names[i].(string), PortNum: names[i+1].(int)})
		}
		return out
	}
	for _, c := range []struct {
		name  string
		ports []fabric.PortAttr
		want  []int
	}{
		{"one device", ports("smi1", 1, "smi1", 2, "smi1", 3, "smi1", 4), []int{1, 2, 3, 4}},
		{"one device, some ports", ports("smi1", 4, "smi1", 2), []int{4, 2}},
		{"a device per plane", ports("mlx5_9", 1, "mlx5_10", 1, "mlx5_11", 1), []int{3, 1, 2}},
		{"two devices of two ports", ports("b", 2, "a", 1, "b", 1, "a", 2), []int{4, 1, 3, 2}},
		{"none", nil, []int{}},
	} {
		if got := PlaneNumbers(c.ports); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
