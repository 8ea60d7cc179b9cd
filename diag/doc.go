// Package diag implements the infiniband-diags tools (iblinkinfo,
// ibqueryerrors, perfquery, smpquery, saquery, ibroute, ibtracert, sminfo
// and the rest) over the engine: each tool is a function that gathers its
// data with the engine's queries and sweeps and returns it as Go values,
// plus a renderer that prints those values as the C tool prints them
// (byte for byte) or as JSON. The command line (cmd/ibscript) and the Lua
// diag module are thin layers over these functions; this package knows
// nothing of Lua or of flags' spelling beyond the tools' own options.
package diag
