package topo_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// TestOpenFileEmptyName: an empty file name (ibhosts "", --load-cache
// "") is an error that says so and matches fs.ErrNotExist, where
// os.Open's "open : no such file or directory" named nothing.
func TestOpenFileEmptyName(t *testing.T) {
	f, err := topo.OpenFile("")
	if f != nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `open "": an empty file name`) {
		t.Errorf("OpenFile(\"\") = %v, %v; want an error naming the empty name, matching fs.ErrNotExist", f, err)
	}
}
