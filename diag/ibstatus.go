package diag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad/smp"
)

// ibstatus: infiniband-diags' ibstatus script, which prints the sysfs
// files of each local port (/sys/class/infiniband/DEV/ports/N/...) as
// the kernel writes them. On the kernel backend it reads the same files
// (Env.SysFS, else the host's); on the simulators it reads the files
// the kernel would write for the simulated local port (SimSysFS): the
// port's GID, LIDs and states as the backend lists them, its rate from
// the PortInfo the port's SMA answers, as ibstat answers there.

// IBStatusOptions are ibstatus's arguments: devices, each "DEV" (every
// port) or "DEV:PORT"; none is every device.
type IBStatusOptions struct {
	Devices []string `pos:"*" lua:"devices"`
}

// IBStatus is what ibstatus prints: one block per port.
type IBStatus struct {
	Ports []StatusPort `json:"ports"`
}

// StatusPort is one port's block: each value the text of its sysfs file
// as the script's echo prints it (words joined by one space), "unknown"
// where the file cannot be read ("IB" for a missing link_layer).
type StatusPort struct {
	Device     string `json:"device"`
	Port       string `json:"port"`
	DefaultGID string `json:"default_gid"`
	BaseLID    string `json:"base_lid"`
	SMLID      string `json:"sm_lid"`
	State      string `json:"state"`
	PhysState  string `json:"phys_state"`
	Rate       string `json:"rate"`
	LinkLayer  string `json:"link_layer"`
}

// SysClassInfiniband is where the kernel lists its RDMA devices.
const SysClassInfiniband = "/sys/class/infiniband"

// ibStatusTool is ibstatus.
var ibStatusTool = NewTool(Tool{
	Name:    "ibstatus",
	Lua:     "status",
	Summary: "the local ports' sysfs state: GID, LIDs, state, physical state, rate, link layer",
	Args:    "[devname[:portnum]]...",
	Exclude: "z,C,P,G,D,L,s,t,y,e,v,d,V,node-name-map",
	Script: "Usage:  ibstatus  [-h] [devname[:portnum]]\n" +
		"\t-h:\tthis help screen\n" +
		"\tExamples:\n" +
		"\t\tibstatus mthca1\t\t# shows status of all ports of 'mthca1'\n" +
		"\t\tibstatus mthca0:2\t# shows status port number 2 of 'mthca0'\n" +
		"\t\tibstatus\t\t# default: shows status of all 'mthca0' ports\n",
	Example: []string{},
	LuaDoc: `status({devices = nil | "DEV" | "DEV:PORT" | {...}}) -> {ports = {{device, port, default_gid, base_lid, sm_lid, state, phys_state, rate, link_layer}, ...}}: ` +
		`the local ports' sysfs texts, as ibstatus prints them (every device without devices)`,
	LuaExample: `for _, p in ipairs(diag.status().ports) do print(p.device, p.port, p.state, p.rate) end`,
}, IBStatusOptions{}, IBStatusRun, WriteIBStatus)

// IBStatusRun reads the ports' files as ibstatus does. A device without
// a ports directory ends it with a *ScriptFatal, the ports read before
// it returned with it.
func IBStatusRun(ctx context.Context, env *Env, o IBStatusOptions) (*IBStatus, error) {
	sys, err := env.sysFS(ctx)
	if err != nil {
		return nil, err
	}
	r := &IBStatus{Ports: []StatusPort{}}
	if len(o.Devices) == 0 {
		devs, err := globNames(sys, ".")
		if err != nil {
			return r, &ScriptFatal{"No devices"}
		}
		for _, d := range devs {
			if err := r.device(sys, d, "+"); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	for _, a := range o.Devices {
		// sed 's/:.*$//' and sed 's/^.*://': up to the first colon, and
		// after the last; no colon is every port.
		dev, _, _ := strings.Cut(a, ":")
		port := a[strings.LastIndexByte(a, ':')+1:]
		if port == dev {
			port = "+"
		}
		if err := r.device(sys, dev, port); err != nil {
			return r, err
		}
	}
	return r, nil
}

// device is ib_status: the ports of dev, "+" for all of them.
func (r *IBStatus) device(sys fs.FS, dev, port string) error {
	dir := path.Join(dev, "ports")
	if fi, err := fs.Stat(sys, dir); err != nil || !fi.IsDir() {
		return &ScriptFatal{fmt.Sprintf("device '%s': sys files not found (%s/%s/ports)", dev, SysClassInfiniband, dev)}
	}
	ports := strings.Fields(port) // $ports, unquoted
	if port == "+" {
		ports, _ = globNames(sys, dir)
	}
	for _, p := range ports {
		pd := path.Join(dir, p)
		read := func(name, missing string) string {
			b, err := fs.ReadFile(sys, path.Join(pd, name))
			if err != nil {
				return missing
			}
			return strings.Join(strings.Fields(string(b)), " ") // `cat`, unquoted
		}
		r.Ports = append(r.Ports, StatusPort{Device: dev, Port: p, DefaultGID: read("gids/0", "unknown"),
			BaseLID: read("lid", "unknown"), SMLID: read("sm_lid", "unknown"), State: read("state", "unknown"),
			PhysState: read("phys_state", "unknown"), Rate: read("rate", "unknown"), LinkLayer: read("link_layer", "IB")})
	}
	return nil
}

// globNames is the shell's * in dir: the names, sorted; "*" itself when
// there are none, as sh leaves a glob that matches nothing.
func globNames(sys fs.FS, dir string) ([]string, error) {
	ents, err := fs.ReadDir(sys, dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return []string{"*"}, nil
	}
	slices.Sort(names)
	return names, nil
}

// WriteIBStatus prints r as ibstatus does.
func WriteIBStatus(w io.Writer, r *IBStatus) error {
	var b strings.Builder
	line := func(label, v string) {
		b.WriteString(label)
		if v != "" {
			b.WriteString(" " + v)
		}
		b.WriteByte('\n')
	}
	for _, p := range r.Ports {
		fmt.Fprintf(&b, "Infiniband device '%s' port %s status:\n", p.Device, p.Port)
		line("\tdefault gid:\t", p.DefaultGID)
		line("\tbase lid:\t", p.BaseLID)
		line("\tsm lid:\t\t", p.SMLID)
		line("\tstate:\t\t", p.State)
		line("\tphys state:\t", p.PhysState)
		line("\trate:\t\t", p.Rate)
		line("\tlink_layer:\t", p.LinkLayer)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sysFS is the sysfs class directory ibstatus reads: Env.SysFS, the
// host's on the kernel backend, else the simulated local port's.
func (e *Env) sysFS(ctx context.Context) (fs.FS, error) {
	if e != nil && e.SysFS != nil {
		return e.SysFS, nil
	}
	if e == nil || e.Session == nil {
		return nil, errors.New("diag: no session (the tool needs a fabric)")
	}
	s := e.Session
	if s.Production() {
		return os.DirFS(SysClassInfiniband), nil
	}
	if e.Ports == nil {
		return nil, errors.New("diag: ibstatus: no list of the local ports (Env.Ports)")
	}
	all, err := e.Ports(ctx)
	if err != nil {
		return nil, err
	}
	ports := LocalPorts(all, s.Port(), false)
	pis := make([]smp.PortInfo, len(ports))
	for i, p := range ports {
		// The port's own PortInfo (its SMA, by the empty route): the
		// width and speeds the kernel's rate file is made of.
		if pis[i], err = s.PortInfo(ctx, engine.DR(), uint8(p.PortNum)); err != nil {
			return nil, fmt.Errorf("PortInfo of local port %s/%d: %w", p.CAName, p.PortNum, err)
		}
	}
	return SimSysFS(ports, pis), nil
}

// SimSysFS is the /sys/class/infiniband the kernel would show for
// ports, each with its PortInfo: the files ibstatus reads, in the
// kernel's formats (ib_core's sysfs.c).
func SimSysFS(ports []fabric.PortAttr, pis []smp.PortInfo) fs.FS {
	m := fstest.MapFS{}
	for i, p := range ports {
		dir := fmt.Sprintf("%s/ports/%d/", p.CAName, p.PortNum)
		put := func(name, format string, args ...any) {
			m[dir+name] = &fstest.MapFile{Data: fmt.Appendf(nil, format+"\n", args...), Mode: 0o444}
		}
		gid := make([]string, 0, 8)
		for _, v := range []uint64{p.GIDPrefix, p.PortGUID} {
			for sh := 48; sh >= 0; sh -= 16 {
				gid = append(gid, fmt.Sprintf("%04x", uint16(v>>sh)))
			}
		}
		put("gids/0", "%s", strings.Join(gid, ":"))
		put("lid", "0x%x", p.LID)
		put("sm_lid", "0x%x", p.SMLID)
		put("state", "%d: %s", p.State, sysfsName(sysfsStates, p.State, "UNKNOWN"))
		put("phys_state", "%d: %s", p.PhysState, sysfsName(sysfsPhysStates, p.PhysState, "<unknown>"))
		if r, ok := sysfsRate(pis[i]); ok {
			put("rate", "%s", r)
		}
		ll := p.LinkLayer
		if ll == "" {
			ll = "InfiniBand"
		}
		put("link_layer", "%s", ll)
	}
	return m
}

// The kernel's names of port states and physical states (ib_core's
// sysfs.c state_show, phys_state_to_str).
var (
	sysfsStates     = []string{"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"}
	sysfsPhysStates = []string{"<unknown>", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test"}
)

func sysfsName(names []string, v int, other string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return other
}

// sysfsRate is the kernel's rate file (rate_show): the lanes' rate in
// Gb/s (".5" for SDR's odd halves), the width and the speed's name, the
// extended speed winning as for the kernel's active_speed; ok false for
// a width the kernel cannot name (its read fails with EINVAL).
func sysfsRate(pi smp.PortInfo) (string, bool) {
	lanes := smp.WidthLanes(pi.LinkWidthActive)
	if lanes == 0 {
		return "", false
	}
	name, deci := " SDR", 25
	switch pi.LinkSpeedExtActive {
	case 1:
		name, deci = " FDR", 140
	case 2:
		name, deci = " EDR", 250
	case 4:
		name, deci = " HDR", 500
	case 8:
		name, deci = " NDR", 1000
	default:
		switch pi.LinkSpeedActive {
		case 2:
			name, deci = " DDR", 50
		case 4:
			name, deci = " QDR", 100
		}
	}
	deci *= lanes
	half := ""
	if deci%10 != 0 {
		half = ".5"
	}
	return fmt.Sprintf("%d%s Gb/sec (%dX%s)", deci/10, half, lanes, name), true
}
