package diag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad/smp"
)

// IBStat is ibstat's data: the local CAs (umad_get_ca) and their ports
// (umad_get_port), sorted by name as ibstat sorts them.
type IBStat struct {
	CAs []StatCA `json:"cas"`

	o IBStatOptions
}

// StatCA is one CA as ibstat prints it.
type StatCA struct {
	Name     string     `json:"name"`
	Type     string     `json:"type"` // "CA", "Switch", "Router"
	CAType   string     `json:"ca_type"`
	NumPorts int        `json:"num_ports"`
	FWVer    string     `json:"firmware_version"`
	HWVer    string     `json:"hardware_version"`
	NodeGUID GUID       `json:"node_guid"`
	SysGUID  GUID       `json:"system_image_guid"`
	Ports    []StatPort `json:"ports"`
}

// StatPort is one port as ibstat prints it.
type StatPort struct {
	Port      int    `json:"port"`
	State     string `json:"state"`
	PhysState string `json:"physical_state"`
	// Rate is umad_port_t's rate in Gb/s (2 for 2.5, which ibstat prints
	// as "2.5").
	Rate int `json:"rate"`
	// FDR10: ibstat prints "Rate: 10 (FDR10)" where the kernel's rate
	// text names FDR10 (is_fdr10; fabric.PortAttr.FDR10).
	FDR10 bool `json:"fdr10,omitempty"`
	// EffectiveSpeed is, with current rdma-core's behaviour (Env.Version),
	// ibv_query_port_speed's effective bandwidth in units of 100 Mb/s
	// (rdma-core #1769); nil where it cannot be queried, as ibstat
	// leaves out its line where the provider lacks the verb.
	EffectiveSpeed *uint64 `json:"effective_speed,omitempty"`
	LID            uint16  `json:"base_lid"`
	LMC            uint8   `json:"lmc"`
	SMLID          uint16  `json:"sm_lid"`
	CapMask        uint32  `json:"capability_mask"`
	PortGUID       GUID    `json:"port_guid"`
	LinkLayer      string  `json:"link_layer"`
}

// IBStatOptions are ibstat's command line.
type IBStatOptions struct {
	// CA is the <ca_name> argument ("" for every CA); Port its [portnum]
	// (-1 for none): that port alone.
	CA   string `pos:"0" lua:"ca"`
	Port int    `pos:"1" lua:"port" max:"254"`
	// List is -l (names only), Short -s (no ports), PortList -p (the
	// port GUIDs).
	List     bool `flag:"l,list_of_cas" help:"list all IB devices" lua:"list"`
	Short    bool `flag:"s,short" help:"short output" lua:"short"`
	PortList bool `flag:"p,port_list" help:"show port list" lua:"port_list"`
}

// ibStatTool is ibstat.
var ibStatTool = NewTool(Tool{
	Name:    "ibstat",
	Lua:     "stat",
	Summary: "the local CAs and their ports: state, rate, LIDs, GUIDs (umad_get_ca, umad_get_port)",
	Args:    "<ca_name> [portnum]",
	// ibdiag_process_opts(..., "CDeGKLPsty", ...): the common options
	// it does not take.
	Exclude: "C,D,e,G,K,L,P,s,t,y",
	MaxArgs: 2,
	Example: []string{},
	LuaDoc: `stat({ca = NAME, port = N, list, short, port_list}) -> {cas = {{name, type, ca_type, num_ports, firmware_version, hardware_version, node_guid, system_image_guid, ` +
		`ports = {{port, state, physical_state, rate, base_lid, lmc, sm_lid, capability_mask, port_guid, link_layer}, ...}}, ...}}: ` +
		`the local CAs and their ports, as ibstat shows them (ca: that CA only; port: that port only)`,
	LuaExample: `local s = diag.stat()
print(s.cas[1].name, s.cas[1].ports[1].state)`,
}, IBStatOptions{Port: -1}, IBStatRun, WriteIBStat)

// IBPanic is a C tool's IBPANIC: "ibpanic: FUNC: MSG" on stderr (FUNC
// the C function that panicked, main when empty; the C line's "[pid]"
// is left out), after Warning's "ibwarn: ..." line when there is one,
// exit status 255.
type IBPanic struct {
	Warning string
	Func    string
	Msg     string // the line's MSG; empty: Err's text
	Err     error
}

func (e *IBPanic) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return e.Err.Error()
}

// Where is the C function that panicked: Func, or main.
func (e *IBPanic) Where() string {
	if e.Func == "" {
		return "main"
	}
	return e.Func
}
func (e *IBPanic) Unwrap() error { return e.Err }

// IBStatRun lists the local ports (Env.Ports: those umad_get_ca would
// show on the session's host, LocalPorts) as ibstat does; a CA or port
// that is not there is its IBPANIC.
func IBStatRun(ctx context.Context, env *Env, o IBStatOptions) (*IBStat, error) {
	if env == nil || env.Session == nil || env.Ports == nil {
		return nil, errors.New("diag: ibstat: no session and list of the local ports (Env.Ports)")
	}
	all, err := env.Ports(ctx)
	if err != nil {
		return nil, err
	}
	r, err := IBStatOf(LocalPorts(all, env.Session.Port(), env.Session.Production()), o)
	if err == nil && env.current() && env.PortSpeed != nil {
		r.effectiveSpeeds(ctx, env.PortSpeed)
	}
	var noPort *ErrNoPort
	var noCA ErrNoCA
	switch {
	case errors.As(err, &noPort):
		return nil, &IBPanic{Warning: noPort.Warning(), Err: err}
	case errors.As(err, &noCA):
		return nil, &IBPanic{Err: err}
	}
	return r, err
}

// effectiveSpeeds asks each port's effective bandwidth as current
// ibstat's port_dump does (ibv_query_port_speed, rdma-core #1769); a port
// whose query fails keeps none (its line is left out).
func (r *IBStat) effectiveSpeeds(ctx context.Context, speed func(ctx context.Context, ca string, port int) (uint64, error)) {
	for i := range r.CAs {
		c := &r.CAs[i]
		for j := range c.Ports {
			if v, err := speed(ctx, c.Name, c.Ports[j].Port); err == nil {
				c.Ports[j].EffectiveSpeed = &v
			}
		}
	}
}

// ErrNoCA is ibstat's IBPANIC for a <ca_name> that is not there.
type ErrNoCA string

func (e ErrNoCA) Error() string { return fmt.Sprintf("'%s' IB device can't be found", string(e)) }

// ErrNoPort is a [portnum] the CA does not have: ibstat's ibwarn line
// (Warning) and then its IBPANIC (Error).
type ErrNoPort struct {
	Type, CA  string
	Port, Max int
}

// Warning is the ibwarn line's text ("function: text").
func (e *ErrNoPort) Warning() string {
	return fmt.Sprintf("ca_stat: %s: '%s' has no port number %d - max (%d)", e.Type, e.CA, e.Port, e.Max)
}

func (e *ErrNoPort) Error() string { return fmt.Sprintf("stat of IB device '%s' failed", e.CA) }

// LocalPorts picks, of all the ports a fabric.Fabric lists, those
// umad_get_ca would show on the host of self (the session's port): every
// one on a real fabric (the kernel's devices); elsewhere those of self's
// node (the simulator lists every CA of its fabric), or self alone (a
// switch's port 0, which no list holds).
func LocalPorts(all []fabric.PortAttr, self fabric.PortAttr, production bool) []fabric.PortAttr {
	if production {
		return all
	}
	var out []fabric.PortAttr
	for _, p := range all {
		if p.NodeGUID == self.NodeGUID {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = append(out, self)
	}
	return out
}

// IBStatOf groups ports, the local ports as fabric.Fabric.Ports lists
// them, into ibstat's CAs; with o.CA only that CA (ErrNoCA when there is
// none of that name).
func IBStatOf(ports []fabric.PortAttr, o IBStatOptions) (*IBStat, error) {
	r := &IBStat{o: o}
	for _, p := range ports {
		i := slices.IndexFunc(r.CAs, func(c StatCA) bool { return c.Name == p.CAName })
		if i < 0 {
			r.CAs = append(r.CAs, StatCA{Name: p.CAName, Type: statNodeType(p.NodeType), CAType: p.CAType,
				NumPorts: p.CANumPorts, FWVer: p.FWVer, HWVer: p.HWVer, NodeGUID: GUID(p.NodeGUID), SysGUID: GUID(p.SysGUID)})
			i = len(r.CAs) - 1
		}
		ll := p.LinkLayer
		if ll == "" {
			ll = "InfiniBand"
		}
		r.CAs[i].Ports = append(r.CAs[i].Ports, StatPort{Port: p.PortNum, State: statState(p.State),
			PhysState: statPhys(p.PhysState), Rate: p.Rate, FDR10: p.FDR10, LID: p.LID, LMC: p.LMC, SMLID: p.SMLID,
			CapMask: p.CapMask, PortGUID: GUID(p.PortGUID), LinkLayer: ll})
	}
	// umad_sort_ca_device_list: by name, strcmp.
	slices.SortStableFunc(r.CAs, func(a, b StatCA) int { return strings.Compare(a.Name, b.Name) })
	for i := range r.CAs {
		c := &r.CAs[i]
		slices.SortStableFunc(c.Ports, func(a, b StatPort) int { return a.Port - b.Port })
		if n := c.Ports[len(c.Ports)-1].Port; c.NumPorts < n {
			c.NumPorts = n
		}
	}
	if o.CA != "" {
		i := slices.IndexFunc(r.CAs, func(c StatCA) bool { return c.Name == o.CA })
		if i < 0 {
			return nil, ErrNoCA(o.CA)
		}
		r.CAs = r.CAs[i : i+1]
	}
	if o.Port >= 0 && !o.List && !o.PortList && !o.Short {
		for i := range r.CAs {
			c := &r.CAs[i]
			j := slices.IndexFunc(c.Ports, func(p StatPort) bool { return p.Port == o.Port })
			if j < 0 {
				return nil, &ErrNoPort{Type: c.Type, CA: c.Name, Port: o.Port, Max: c.NumPorts}
			}
			c.Ports = c.Ports[j : j+1]
		}
	}
	return r, nil
}

func statNodeType(t int) string {
	switch uint8(t) {
	case smp.NodeTypeCA:
		return "CA"
	case smp.NodeTypeSwitch:
		return "Switch"
	case smp.NodeTypeRouter:
		return "Router"
	case 4:
		return "iWARP RNIC"
	}
	return "???"
}

func statState(s int) string {
	if s >= 0 && s < len(statStates) {
		return statStates[s]
	}
	return "???"
}

func statPhys(s int) string {
	if s >= 0 && s < len(statPhysStates) {
		return statPhysStates[s]
	}
	return "???"
}

var (
	statStates     = [...]string{"???", "Down", "Initializing", "Armed", "Active"}
	statPhysStates = [...]string{"No state change", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}
)

// WriteIBStat prints r as ibstat does: with -l the CA names, with -p the
// port GUIDs, with a port number that port alone under "CA: 'name'",
// else each CA's header and (without -s) its ports.
func WriteIBStat(w io.Writer, r *IBStat) error {
	var b strings.Builder
	o := r.o
	for _, c := range r.CAs {
		switch {
		case o.PortList:
			for _, p := range c.Ports {
				if p.PortGUID != 0 {
					fmt.Fprintf(&b, "0x%016x\n", uint64(p.PortGUID))
				}
			}
		case o.List:
			fmt.Fprintf(&b, "%s\n", c.Name)
		case o.Port >= 0 && !o.Short:
			fmt.Fprintf(&b, "%s: '%s'\n", c.Type, c.Name)
			writeStatPort(&b, c.Ports[0], "", "")
		default:
			fmt.Fprintf(&b, "%s '%s'\n\t%s type: %s\n\tNumber of ports: %d\n\tFirmware version: %s\n\tHardware version: %s\n\tNode GUID: 0x%016x\n\tSystem image GUID: 0x%016x\n",
				c.Type, c.Name, c.Type, c.CAType, c.NumPorts, c.FWVer, c.HWVer, uint64(c.NodeGUID), uint64(c.SysGUID))
			if !o.Short {
				for _, p := range c.Ports {
					writeStatPort(&b, p, "\t", "\t\t")
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeStatPort(b *strings.Builder, p StatPort, hdr, pre string) {
	rate := fmt.Sprint(p.Rate)
	switch {
	case p.FDR10:
		rate += " (FDR10)"
	case p.Rate == 2: // 1x SDR
		rate = "2.5"
	}
	fmt.Fprintf(b, "%sPort %d:\n%sState: %s\n%sPhysical state: %s\n%sRate: %s\n", hdr, p.Port, pre, p.State, pre, p.PhysState, pre, rate)
	if p.EffectiveSpeed != nil {
		// Current ibstat's port_dump: printf("%sEffective speed: %g\n",
		// pre, effective_speed / 10.0), C's %g (6 significant digits).
		fmt.Fprintf(b, "%sEffective speed: %s\n", pre, strconv.FormatFloat(float64(*p.EffectiveSpeed)/10, 'g', 6, 64))
	}
	fmt.Fprintf(b, "%sBase lid: %d\n%sLMC: %d\n%sSM lid: %d\n%sCapability mask: 0x%08x\n%sPort GUID: 0x%016x\n%sLink layer: %s\n",
		pre, p.LID, pre, p.LMC, pre, p.SMLID, pre, p.CapMask, pre, uint64(p.PortGUID), pre, p.LinkLayer)
}
