package main

import "strings"

// secretLine reports whether a REPL chunk mentions a management key
// (M_Key, SM_Key, CC_Key, in any spelling: m_key, mkey, sm_key, smkey,
// cc_key, cckey, IBSCRIPT_MKEY); such chunks are kept out of the history, in memory and
// on disk, as lines starting with a space are.
func secretLine(src string) bool {
	s := strings.ToLower(src)
	s = strings.NewReplacer("_", "", "-", "").Replace(s)
	return strings.Contains(s, "mkey") || strings.Contains(s, "smkey") || strings.Contains(s, "cckey")
}
