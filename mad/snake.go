package mad

import "strings"

// acronyms are the initialisms that IBA field names run together without a
// case change ("MasterSMLID" is Master SM LID). Longer entries win.
var acronyms = [...]string{
	"BECN", "DLID", "FECN", "GUID", "MLID", "SLID",
	"EDR", "FDB", "FDR", "FEC", "GID", "HDR", "HOQ", "LED", "LID", "LMC", "MAD", "MTU", "NDR", "PMA", "SMP",
	"DR", "FL", "HL", "ID", "QP", "SL", "SM", "TC", "VL",
}

// SnakeName derives the Lua table key of an IBA field name: words are split
// at case changes and underscores, runs of capitals are split into the known
// IBA initialisms, a plural "s" stays on its initialism, a lower-case "to"
// after an initialism is a word ("SLtoVL"), digits stay on the word before
// them, and everything is lower-cased:
//
//	LinkWidthEnabled -> link_width_enabled    M_KeyLeasePeriod -> m_key_lease_period
//	NodeGUID         -> node_guid             MasterSMLID      -> master_sm_lid
//	VLArbitrationHighCap -> vl_arbitration_high_cap
//	LIDsPerPort      -> lids_per_port         QP1Dropped       -> qp1_dropped
//
// It is the generator's rule (mad/internal/madgen writes each row's key
// into its Field.LuaKey), not called at run time: code reads Field.Key.
// The hand-written header layouts spell their keys out by the same rule,
// which TestLuaKeys checks for every layout, and the golden list in the
// tests pins every key.
func SnakeName(name string) string {
	var words []string
	i := 0
	for i < len(name) {
		c := name[i]
		switch {
		case c == '_' || c == ' ' || c == '.':
			i++
		case isUpper(c):
			j := i
			for j < len(name) && isUpper(name[j]) {
				j++
			}
			end := j // end of the initialism part of the run
			plural := false
			switch {
			case j < len(name) && name[j] == 's' && (j+1 == len(name) || !isLower(name[j+1])):
				plural = true // "LIDs"
			case strings.HasPrefix(name[j:], "to") && (j+2 == len(name) || !isLower(name[j+2])):
				// "SLtoVL": the connector "to" follows a whole initialism
			case j < len(name) && isLower(name[j]):
				end = j - 1 // "VLArbitration", "Link": the last capital starts a word
			}
			if end > i {
				words = append(words, splitAcronyms(name[i:end])...)
			}
			if end == j {
				k := j
				if plural {
					k++
				}
				for k < len(name) && isDigit(name[k]) {
					k++
				}
				words[len(words)-1] += name[j:k]
				i = k
				continue
			}
			i = end
			k := i + 1
			for k < len(name) && (isLower(name[k]) || isDigit(name[k])) {
				k++
			}
			words = append(words, name[i:k])
			i = k
		default:
			k := i + 1
			for k < len(name) && (isLower(name[k]) || isDigit(name[k])) {
				k++
			}
			if isDigit(c) && len(words) > 0 {
				words[len(words)-1] += name[i:k]
			} else {
				words = append(words, name[i:k])
			}
			i = k
		}
	}
	return strings.ToLower(strings.Join(words, "_"))
}

// splitAcronyms splits a run of capitals into known initialisms, longest
// first; an unknown remainder stays one word.
func splitAcronyms(s string) []string {
	var out []string
	for s != "" {
		best := ""
		for _, a := range acronyms {
			if len(a) > len(best) && strings.HasPrefix(s, a) {
				best = a
			}
		}
		if best == "" {
			best = s
		}
		out = append(out, best)
		s = s[len(best):]
	}
	return out
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
