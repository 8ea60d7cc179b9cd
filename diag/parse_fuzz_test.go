package diag_test

import (
	"strings"
	"testing"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/mad/smp"
)

// FuzzParseAddress: the readers of the tools' destination arguments
// (-L, -G, -D, ibscript's targets, smpquery -c's combined route) never
// panic; what they accept is a target of its kind within its limits (a
// unicast LID, a route of at most MaxHops hops, a GUID other than 0),
// and what they refuse has an error saying what.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"5", "0x5", "0", "-1", "0xbfff", "0xc000", "2abc", "0,1,3", "0,300", "0,", ",", "",
		"0x0002c90300001234", "0x", "guid:0x1", "lid:6+dr:0,12", "6 0,12", "6", "99999999999999999999", "\xff\xfe",
		strings.Repeat("0,", 70) + "1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, kind := range []diag.AddrKind{diag.AddrLID, diag.AddrGUID, diag.AddrDR, diag.AddrTarget} {
			a, err := diag.ParseAddress(kind, s)
			checkAddress(t, kind.String(), s, a, err)
		}
		a, err := diag.ParseCombined(s)
		checkAddress(t, "combined", s, a, err)
	})
}

func checkAddress(t *testing.T, kind, s string, a diag.Address, err error) {
	t.Helper()
	if err != nil {
		if err.Error() == "" {
			t.Errorf("%s %q: an empty error", kind, s)
		}
		return
	}
	tg := a.Target
	switch {
	case len(tg.Path) > smp.MaxHops+1:
		t.Errorf("%s %q: a route of %d hops", kind, s, len(tg.Path)-1)
	case len(tg.Path) == 0 && tg.LID == 0 && tg.GUID == 0 && tg.GID == [16]byte{}:
		t.Errorf("%s %q: accepted as %v, which addresses nothing", kind, s, tg)
	case tg.LID >= 0xc000:
		t.Errorf("%s %q: LID %#x is not unicast", kind, s, tg.LID)
	}
}

// FuzzParsePerfPorts: perfquery's port list never panics, never holds
// more than perfquery's array (a range of 2^63 ports used to be built
// until the memory limit stopped it), and a range is refused with
// perfquery's message when it goes down.
func FuzzParsePerfPorts(f *testing.F) {
	for _, s := range []string{"3", "1,4,8", "1-10", "10-1", "1-0x7fffffffffffffff", "-9223372036854775808-9223372036854775807",
		"0-254", "0-255", ",", "-", "", "1,", strings.Repeat("1,", 300), "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ports, err := diag.ParsePerfPorts(s)
		if err != nil {
			if err.Error() == "" {
				t.Errorf("%q: an empty error", s)
			}
			return
		}
		if len(ports) > diag.MaxPerfPorts {
			t.Errorf("%q: %d ports, more than perfquery's %d", s, len(ports), diag.MaxPerfPorts)
		}
	})
}

// FuzzParseCPUInfo: ibsysstat -S's reader of /proc/cpuinfo never
// panics and keeps at most the server's number of processors, whatever
// the file holds (no processor line, fields before one, lines past
// fgets' 1,023 bytes, NULs).
func FuzzParseCPUInfo(f *testing.F) {
	f.Add("processor\t: 0\nmodel name\t: X\ncpu MHz\t\t: 1000.000\n\n")
	f.Add("model name\t: before any processor\nprocessor\t: 0\n")
	f.Add("processor\t: 0\nmodel name\t" + strings.Repeat("y", 2000) + ": z\n")
	f.Add(strings.Repeat("processor\t: 1\n", 300))
	f.Add("processor\t\x00: 0\ncpu MHz\t:\n")
	f.Fuzz(func(t *testing.T, text string) {
		cpus := diag.ParseCPUInfo(text)
		if n := strings.Count(text, "processor\t"); len(cpus) > n {
			t.Errorf("%d processors from a text naming %d", len(cpus), n)
		}
	})
}
