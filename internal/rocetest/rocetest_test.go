package rocetest

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	e, err := Parse("rxe0/1/fd00::1,rxe1/1/10.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	if e[0].CA != "rxe0" || e[0].Port != 1 || e[0].IP.String() != "fd00::1" || e[0].GID[0] != 0xfd || e[0].GID[15] != 1 {
		t.Errorf("first end %+v", e[0])
	}
	// An IPv4 address's RoCE GID is IPv4-mapped.
	if g := e[1].GID; g[10] != 0xff || g[11] != 0xff || g[12] != 10 || g[15] != 2 {
		t.Errorf("GID of 10.0.0.2: %x", g)
	}
	for _, bad := range []string{"rxe0/1/fd00::1", "rxe0/1,rxe1/1/fd00::2", "rxe0/x/fd00::1,rxe1/1/fd00::2", "rxe0/1/nope,rxe1/1/fd00::2"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), Env) {
			t.Errorf("Parse(%q): %v, want an error naming $%s", bad, err, Env)
		}
	}
}
