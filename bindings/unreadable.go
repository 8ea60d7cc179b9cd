package bindings

import (
	"errors"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
)

// What could not be read. A query that got no answer after every try, or
// whose answers could not be verified where they may arrive damaged
// (engine.Unreadable), says nothing about the fabric: a plan must report
// it as "could not be read" (status error, exit 2), never as a failed
// check. Scripts see such failures as strings (a raised error, a sweep
// result's err, a discovery error), so the bindings remember every such
// string they hand out; plan.check and r:fail recognise them, whole or at
// the end of a message that adds context ("dr:0,1: " .. e.err, Lua's
// "file:12: " position), and record an error result instead of a failure.

// unreadKey is the registry key of a state's unreadSet.
const unreadKey = "ibscript.unreadable"

// maxUnread bounds the messages remembered: past it, the oldest half is
// forgotten (a run that cannot read tens of thousands of things reports
// the run as unreadable anyway).
const maxUnread = 1 << 16

type unreadSet struct {
	mu    sync.Mutex
	m     map[string]struct{}
	order []string
}

func unreadOf(L *lua.LState) *unreadSet {
	reg := L.Get(lua.RegistryIndex)
	if ud, ok := L.GetField(reg, unreadKey).(*lua.LUserData); ok {
		if u, ok := ud.Value.(*unreadSet); ok {
			return u
		}
	}
	u := &unreadSet{m: map[string]struct{}{}}
	ud := L.NewUserData()
	ud.Value = u
	L.SetField(reg, unreadKey, ud)
	return u
}

// noteUnread remembers msg as the text of something that could not be
// read.
func noteUnread(L *lua.LState, msg string) {
	if msg == "" {
		return
	}
	u := unreadOf(L)
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.m[msg]; ok {
		return
	}
	if len(u.order) >= maxUnread {
		for _, old := range u.order[:maxUnread/2] {
			delete(u.m, old)
		}
		u.order = append(u.order[:0], u.order[maxUnread/2:]...)
	}
	u.m[msg] = struct{}{}
	u.order = append(u.order, msg)
}

// isUnread reports whether msg is, or ends with after a ": ", a message
// noteUnread remembered.
func isUnread(L *lua.LState, msg string) bool {
	u := unreadOf(L)
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.m) == 0 {
		return false
	}
	for s := msg; ; {
		if _, ok := u.m[s]; ok {
			return true
		}
		i := strings.Index(s, ": ")
		if i < 0 {
			return false
		}
		s = s[i+2:]
	}
}

// unreadable reports whether err is a read that could not be done
// (engine.Unreadable), or, where answers may arrive damaged, an answer
// that contradicted the others (engine.ErrInconsistent): neither says the
// fabric is wrong.
func (e *Env) unreadable(err error) bool {
	if engine.Unreadable(err) {
		return true
	}
	return errors.Is(err, engine.ErrInconsistent) && e.sess.Verifies()
}
