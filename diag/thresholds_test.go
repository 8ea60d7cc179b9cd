package diag

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
)

// TestParseThresholdsFile reads the threshold file infiniband-diags
// installs: every line is a comment, so no thresholds (all 0).
func TestParseThresholdsFile(t *testing.T) {
	f, err := os.Open("testdata/error_thresholds")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ParseThresholds(f, "testdata/error_thresholds")
	if err != nil || len(got) != 0 {
		t.Errorf("got %v, %v; want no thresholds", got, err)
	}
}

// FuzzParseThresholds: the parser never panics, an error names the file,
// every key it returns is a known counter's, and the thresholds written
// back as Name=value read back the same.
func FuzzParseThresholds(f *testing.F) {
	seed, err := os.ReadFile("testdata/error_thresholds")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	// The same file with its lines in force.
	f.Add(strings.ReplaceAll(string(seed), "\n#", "\n"))
	f.Add("SymbolErrorCounter=10\r\nVL15Dropped=0x64\nPortXmitWait = 1000\nLinkDownedCounter=010\n")
	f.Add("SymbolErrorCounter=18446744073709551616\n")
	f.Add("=\n")
	byKey := map[string]string{}
	for name, key := range thresholdNames {
		byKey[key] = name
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseThresholds(strings.NewReader(in), "fuzz.thresholds")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.thresholds") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var b strings.Builder
		for key, v := range got {
			name, ok := byKey[key]
			if !ok {
				t.Fatalf("key %q is no counter's", key)
			}
			fmt.Fprintf(&b, "%s=%d\n", name, v)
		}
		back, err := ParseThresholds(strings.NewReader(b.String()), "again")
		if err != nil {
			t.Fatalf("re-reading %q: %v", b.String(), err)
		}
		if !maps.Equal(got, back) {
			t.Fatalf("round trip: %q -> %v -> %v", in, got, back)
		}
	})
}

// TestThresholdsLongLine: an over-long line is an error naming the file
// and the line, not bufio's "token too long".
func TestThresholdsLongLine(t *testing.T) {
	text := "SymbolErrorCounter=10\n# " + strings.Repeat("x", 70_000) + "\n"
	_, err := ParseThresholds(strings.NewReader(text), "error_thresholds")
	if err == nil || !strings.Contains(err.Error(), "error_thresholds:2: line longer than") || strings.Contains(err.Error(), "token too long") {
		t.Errorf("error %v, want error_thresholds:2: line longer than ...", err)
	}
}

func TestParseThresholds(t *testing.T) {
	got, err := ParseThresholds(strings.NewReader("# Define error thresholds here\n\nSymbolErrorCounter=10\n#LinkDownedCounter=10\nVL15Dropped=0x64\nPortXmitWait = 1000\n"), "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["symbol_error_counter"] != 10 || got["vl15_dropped"] != 100 || got["port_xmit_wait"] != 1000 {
		t.Errorf("got %v", got)
	}
	for _, bad := range []string{"SymbolErrors=1\n", "SymbolErrorCounter=ten\n", "SymbolErrorCounter\n"} {
		if _, err := ParseThresholds(strings.NewReader(bad), "f"); err == nil || !strings.Contains(err.Error(), "f:1:") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}
