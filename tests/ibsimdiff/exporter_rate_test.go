package ibsimdiff

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/exporter"
)

// treydockLaneRates is treydock/infiniband_exporter's table of the
// effective data rate of one lane by the speed ibnetdiscover -p prints,
// in Gb/s (collectors/ibnetdiscover.go, release 0.10.0).
var treydockLaneRates = map[string]float64{
	"SDR": 2, "DDR": 4, "QDR": 8, "FDR10": 10, "FDR": 13.64, "EDR": 25, "HDR": 50, "NDR": 100,
}

// treydockRawLaneRates is the same table's raw rate of one lane (its first
// column), in Gb/s: the raw_rate_bytes_per_second series.
var treydockRawLaneRates = map[string]float64{
	"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10.3125, "FDR": 14.0625, "EDR": 25.78125, "HDR": 50, "NDR": 100,
}

var (
	promPortRate  = regexp.MustCompile(`(?m)^infiniband_switch_port_rate_bytes_per_second\{guid="(0x[0-9a-f]+)",port="(\d+)"\} (\S+)$`)
	promPortRaw   = regexp.MustCompile(`(?m)^infiniband_switch_port_raw_rate_bytes_per_second\{guid="(0x[0-9a-f]+)",port="(\d+)"\} (\S+)$`)
	promPortSpeed = regexp.MustCompile(`(?m)^infiniband_switch_port_link_speed_info\{guid="(0x[0-9a-f]+)",port="(\d+)",speed="(\w+)"\} 1$`)
)

// TestExporterRatesMatchTreydock: on net.mixed-mlnx (a 4xFDR10 link
// between a SwitchX and a ConnectX-3, QDR, FDR, EDR and SDR links), the
// exporter's switch port speed label and port_rate_bytes_per_second are
// what treydock's exporter makes of the C tool's `ibnetdiscover -p` on the
// same fabric: the speed as printed ("FDR10" where MlnxExtPortInfo has it
// active, not "QDR") and width x its lane rate / 8 (FDR10 10 Gb/s a lane:
// 5e9 bytes/s at 4x, not QDR's 4e9). treydock rounds FDR's 64/66-coded
// lane rate to 13.64 Gb/s; ibscript's is 14.0625 x 64/66 = 13.636...: the
// rates are compared to 0.1%, FDR10's exactly. port_raw_rate_bytes_per_second
// is treydock's raw rate exactly (FDR10 10.3125 Gb/s a lane, FDR 14.0625).
func TestExporterRatesMatchTreydock(t *testing.T) {
	s := diagSim(t, topoMlnx)
	r := cTool(t, s, "SX", "ibnetdiscover", "-p")
	if r.code != 0 {
		t.Fatalf("ibnetdiscover -p: status %d: %s", r.code, r.stderr)
	}
	type port struct {
		speed     string
		rate, raw float64
	}
	want := map[string]port{}
	for _, line := range strings.Split(string(r.stdout), "\n") {
		f := strings.Fields(line)
		// A switch port with a peer, as treydock's parser takes it:
		// type, LID, port, GUID, width, speed, "-", the peer.
		if len(f) < 8 || f[0] != "SW" || f[6] != "-" {
			continue
		}
		guid, err := strconv.ParseUint(f[3], 0, 64)
		lanes, lerr := strconv.Atoi(strings.TrimSuffix(f[4], "x"))
		lane, ok := treydockLaneRates[f[5]]
		if err != nil || lerr != nil || !ok {
			t.Fatalf("ibnetdiscover -p line %q: not what treydock's exporter parses", line)
		}
		want["0x"+strconv.FormatUint(guid, 16)+":"+f[2]] = port{f[5], float64(lanes) * lane * 1e9 / 8, float64(lanes) * treydockRawLaneRates[f[5]] * 1e9 / 8}
	}
	sess, _ := session(t, s, "SX", nil, nil)
	e := exporter.New(sess, nil)
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := e.WriteText(&text, time.Now()); err != nil {
		t.Fatal(err)
	}
	got := map[string]port{}
	key := func(guid, p string) string {
		v, err := strconv.ParseUint(guid, 0, 64)
		if err != nil {
			t.Fatalf("guid label %q", guid)
		}
		return "0x" + strconv.FormatUint(v, 16) + ":" + p
	}
	// values sets each port's value of the series re matches.
	values := func(re *regexp.Regexp, set func(p *port, v float64)) {
		for _, m := range re.FindAllStringSubmatch(text.String(), -1) {
			v, err := strconv.ParseFloat(m[3], 64)
			if err != nil {
				t.Fatalf("%s: value %q", m[0], m[3])
			}
			k := key(m[1], m[2])
			p := got[k]
			set(&p, v)
			got[k] = p
		}
	}
	values(promPortRate, func(p *port, v float64) { p.rate = v })
	values(promPortRaw, func(p *port, v float64) { p.raw = v })
	for _, m := range promPortSpeed.FindAllStringSubmatch(text.String(), -1) {
		k := key(m[1], m[2])
		p := got[k]
		p.speed = m[3]
		got[k] = p
	}
	fdr10 := 0
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("switch port %s (%s): no rate or speed series", k, w.speed)
		case g.speed != w.speed:
			t.Errorf("switch port %s: speed %q, treydock's %q", k, g.speed, w.speed)
		case w.speed == "FDR10" && g.rate != w.rate, math.Abs(g.rate-w.rate) > w.rate/1000:
			t.Errorf("switch port %s (%s): rate %g bytes/s, treydock's %g", k, w.speed, g.rate, w.rate)
		case g.raw != w.raw:
			t.Errorf("switch port %s (%s): raw rate %g bytes/s, treydock's %g", k, w.speed, g.raw, w.raw)
		}
		if w.speed == "FDR10" {
			fdr10++
		}
	}
	if fdr10 == 0 || len(want) < 5 {
		t.Errorf("%d switch ports compared, %d at FDR10: the fabric's FDR10 link was not compared\n%s", len(want), fdr10, r.stdout)
	}
}
