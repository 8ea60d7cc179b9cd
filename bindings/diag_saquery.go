package bindings

import (
	"errors"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// saCommands are saquery's command options by name.
var saCommands = map[string]diag.SACommand{
	"issm": diag.SAIsSM, "mcgroups": diag.SAMCGroups, "mcmembers": diag.SAMCMembers,
	"classportinfo": diag.SAClassPortInfo, "nodes": diag.SANodeRecords,
}

// diag.saquery: the SA's records as saquery prints them (diag/saquery.go).
func init() {
	registerDiag(Func{"saquery", func(e *Env, L *lua.LState) int {
		const fn = "diag.saquery"
		t := diagOptions(L, fn, "query", "command", "args", "src_to_dst", "sgid_to_dgid", "slid", "dlid", "mlid", "numb_path", "sl", "pkey")
		o := diag.NewSAQueryOptions()
		if c := t.RawGetString("command"); c != lua.LNil {
			cmd, ok := saCommands[lua.LVAsString(c)]
			if !ok {
				raise(L, fn, "option command: \"issm\" (-s), \"mcgroups\" (-g), \"mcmembers\" (-m), \"classportinfo\" (-c) or \"nodes\" (-N) expected, got %s", lua.LVAsString(c))
			}
			o.Command = cmd
		}
		if q := t.RawGetString("query"); q != lua.LNil {
			s, ok := q.(lua.LString)
			if !ok {
				raise(L, fn, "option query: a query name (\"NodeRecord\", \"PR\", ...) expected, got %s", q.Type())
			}
			o.QueryType = string(s)
		}
		if a := t.RawGetString("args"); a != lua.LNil {
			at, ok := a.(*lua.LTable)
			if !ok {
				raise(L, fn, "option args: a list of strings expected, got %s", a.Type())
			}
			for i := 1; i <= at.Len(); i++ {
				o.Args = append(o.Args, lua.LVAsString(at.RawGetInt(i)))
			}
		}
		o.SrcToDst = lua.LVAsString(t.RawGetString("src_to_dst"))
		o.SGIDToDGID = lua.LVAsString(t.RawGetString("sgid_to_dgid"))
		o.SLID = uint16(optField(L, fn, t, "slid", 0xffff))
		o.DLID = uint16(optField(L, fn, t, "dlid", 0xffff))
		o.MLID = uint16(optField(L, fn, t, "mlid", 0xffff))
		o.PKey = uint16(optField(L, fn, t, "pkey", 0xffff))
		if t.RawGetString("numb_path") != lua.LNil {
			o.NumbPath = int(optField(L, fn, t, "numb_path", 0x7f))
		}
		if t.RawGetString("sl") != lua.LNil {
			o.SL = int(optField(L, fn, t, "sl", 15))
		}
		res, err := diag.SAQuery(L.Context(), e.diagEnv(), o)
		var se *diag.SAError
		if errors.As(err, &se) {
			raise(L, fn, "%s (saquery would exit %d)", se.Msg, se.Exit)
		}
		return e.diagResult(L, fn, res, err)
	}, "saquery([{query, command, args, src_to_dst, sgid_to_dgid, slid, dlid, mlid, numb_path, sl, pkey}]) -> {sections = {{type, records = {{fields = {...}}, ...}}}, warnings}: SA records as `saquery [query] [args...]` asks for them (NodeRecord by default; query names and aliases as saquery's: \"PR\", \"SWIR\", \"LFTR\", ...; command \"issm\", \"mcgroups\", \"mcmembers\", \"classportinfo\", \"nodes\" as -s, -g, -m, -c, -N); fields by IBA name, keys never given"},
		`local r = diag.saquery{query = "NodeRecord"}
for _, rec in ipairs(r.sections[1].records) do print(rec.fields.lid, rec.fields.node_description) end`)
}
