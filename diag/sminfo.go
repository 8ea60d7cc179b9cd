package diag

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// SMInfoOptions are sminfo's. Without a target it asks the SM the local
// port names (PortInfo.MasterSMLID). A non-zero Modifier makes it a Set
// of SMInfo with that attribute modifier (1 handover, 2 acknowledge, 3
// disable, 4 standby, 5 discover) carrying State, Priority and Activity:
// the engine refuses it on a production fabric without AllowSet and
// audits it.
type SMInfoOptions struct {
	Target   *engine.Target `pos:"0" lua:"target"`
	Modifier uint32         `pos:"1" lua:"modifier"`
	// State is -s (default 2, SMINFO_STANDBY, as sminfo's).
	State    uint8  `flag:"s,state" arg:"<0-3>" help:"set SM state" lua:"state" max:"0xf"`
	Priority uint8  `flag:"p,priority" arg:"<0-15>" help:"set SM priority" lua:"priority" max:"0xf"`
	Activity uint32 `flag:"a,activity" arg:"<n>" help:"set activity count" lua:"activity"`
}

// smInfoTool is sminfo.
var smInfoTool = NewTool(Tool{
	Name:    "sminfo",
	Lua:     "sminfo",
	Summary: "query the SM's SMInfo (with a modifier: set it, a Set)",
	Args:    "<sm_lid|sm_dr_path> [modifier]",
	Example: []string{},
	LuaDoc: `sminfo({target = nil | LID | "dr:0", modifier, state, priority, activity}) -> {lid, guid, activity, priority, state, state_name}: ` +
		`the SMInfo of the SM the local port names, or of target; a modifier (1 handover .. 5 discover) makes it a Set carrying state, priority and activity, as sminfo's`,
	LuaExample: `local sm = diag.sminfo()
print(sm.lid, sm.state_name)`,
}, SMInfoOptions{State: 2}, SMInfoRun, BuilderText(WriteSMInfo))

// SMInfo is what sminfo prints.
type SMInfo struct {
	LID       uint16 `json:"lid"` // the target's LID (0 for a directed route)
	GUID      GUID   `json:"guid"`
	Activity  uint32 `json:"activity"`
	Priority  uint8  `json:"priority"`
	State     uint8  `json:"state"`
	StateName string `json:"state_name"`
}

var smStates = []string{"SMINFO_NOTACT", "SMINFO_DISCOVER", "SMINFO_STANDBY", "SMINFO_MASTER"}

// SMInfoRun reads (or sets) SMInfo as sminfo does.
func SMInfoRun(ctx context.Context, env *Env, o SMInfoOptions) (*SMInfo, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: sminfo: no session")
	}
	s := env.Session
	var t engine.Target
	if o.Target != nil {
		t = *o.Target
	} else {
		sm, err := localSMLID(ctx, s)
		if err != nil {
			return nil, err
		}
		t = engine.LID(sm)
	}
	var d []byte
	var err error
	if o.Modifier != 0 {
		// Priority and State are 4 bits wide: sminfo's mad_set_field
		// keeps their low bits.
		var req []byte
		req, err = encode(smp.SMInfo{ActCount: o.Activity, Priority: o.Priority & 0xf, SMState: o.State & 0xf}, mad.SMPDataLen)
		if err == nil {
			d, err = s.SMP(ctx, t, mad.MethodSet, smp.AttrSMInfo, o.Modifier, req)
		}
	} else {
		d, err = s.SMP(ctx, t, mad.MethodGet, smp.AttrSMInfo, 0, nil)
	}
	if err != nil {
		return nil, &ToolError{Msg: "query", Err: err}
	}
	info := decode[smp.SMInfo](d)
	r := &SMInfo{GUID: GUID(info.GUID), Activity: info.ActCount, Priority: info.Priority, State: info.SMState}
	if t.Kind == engine.ByLID {
		r.LID = t.LID
	}
	r.StateName = "???"
	if int(r.State) < len(smStates) {
		r.StateName = smStates[r.State]
	}
	return r, nil
}

// localSMLID is the SM LID the local port's PortInfo names, read afresh
// (libibumad reads it from sysfs, which the kernel keeps current). On a
// planarized port it is the SMI side's (current sminfo's
// resolve_sm_portid reads the SMI CA's port): the SM of the plane its SMPs
// go out on, each plane being a subnet of its own.
func localSMLID(ctx context.Context, s *engine.Session) (uint16, error) {
	pa := s.Port()
	port := uint8(pa.PortNum)
	if pa.SMIName != "" && pa.SMIPort > 0 {
		port = uint8(pa.SMIPort)
	}
	if pa.NodeType == int(smp.NodeTypeSwitch) {
		port = 0
	}
	pi, err := s.PortInfo(ctx, engine.DR(), port)
	if err != nil {
		return 0, &ToolError{Msg: "can't resolve sm port (null)", Err: err}
	}
	return pi.MasterSMLID, nil
}

// WriteSMInfo prints r as sminfo does.
func WriteSMInfo(b *strings.Builder, r *SMInfo) {
	fmt.Fprintf(b, "sminfo: sm lid %d sm guid 0x%x, activity count %d priority %d state %d %s\n",
		r.LID, uint64(r.GUID), r.Activity, r.Priority, r.State, r.StateName)
}
