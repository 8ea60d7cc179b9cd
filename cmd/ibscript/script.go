package main

import (
	"fmt"
	"strings"
)

// scriptArgs walks a node-list script's command line as its shell loop
// does (ibhosts, ibswitches, ibrouters; ibnodes runs two of them) and
// returns why the script would print its usage, "" when it would not:
// -h/--help; -y/--m_key, -P/--Port, -C/--Ca, -t/--timeout without a value
// or with one starting with '-'; any other argument starting with '-'
// (an unknown option, "--", a joined value like -Cmlx5_0); a second
// topology file. ibscript's own long options (--fabric, --format,
// --node-name-map, ... with their values) are not the script's and pass.
func scriptArgs(args []string) string {
	files := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "-h", "--help":
			return "help"
		case "-y", "--m_key", "-P", "--Port", "-C", "--Ca", "-t", "--timeout":
			if i+1 >= len(args) || args[i+1] == "" || strings.HasPrefix(args[i+1], "-") {
				return fmt.Sprintf("option %s wants a value not starting with '-'", a)
			}
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			if files++; files > 1 {
				return fmt.Sprintf("a second topology file %q", a)
			}
			continue
		}
		o := ownLongOption(a)
		if o == nil {
			return fmt.Sprintf("option %q is not the script's", a)
		}
		if o.Arg != "" && !strings.Contains(a, "=") {
			i++
		}
	}
	return ""
}

// ownLongOption is the option a names when it is one of ibscript's own
// long options ("--fabric", "--format=json"), nil otherwise.
func ownLongOption(a string) *Option {
	name, ok := strings.CutPrefix(a, "--")
	if !ok {
		return nil
	}
	name, _, _ = strings.Cut(name, "=")
	for i := range commonOptions {
		if o := &commonOptions[i]; o.Short == 0 && o.Long == name {
			return o
		}
	}
	return nil
}

// scriptUsage ends a node-list tool as its script's usage() does: the
// usage line(s) on stdout, status 255 (ibnodes: ibhosts' and then
// ibswitches'); why on stderr, and with -h ibscript's --help too.
func scriptUsage(inv *Invocation, why string) int {
	fmt.Fprint(inv.Stdout, inv.Tool.Script)
	if why == "help" {
		fmt.Fprint(inv.Stderr, toolUsage(inv.Tool))
	} else {
		inv.Errorf("%s: the script prints its usage (%s --help lists ibscript's options)", why, inv.Prog)
	}
	if inv.Tool.ScriptStatus != 0 {
		return inv.Tool.ScriptStatus
	}
	return exitIBExit
}

// nodesScriptUsage is the usage line of the script named name.
func nodesScriptUsage(name string) string {
	return "Usage: " + name + " [-h] [<topology-file> | -y mkey -C ca_name -P ca_port -t timeout_ms]\n"
}
