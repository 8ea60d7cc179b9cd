// Package analyze checks a fabric's routing from its tables alone, with no
// MAD: credit loops (deadlocks) through the switches' forwarding and
// SLtoVL tables, route validation (reach, loops, hop counts, asymmetric
// paths) on unicast and multicast routes, route balance per switch port,
// the nodes whose routes use a link (ibfindnodesusing), and fat-tree
// shape checks. It reads a topo.Fabric and the Tables read from the
// fabric (engine.Session.LFTs, MFTs and SL2VLs) or a saved one; it knows
// nothing of Lua, sessions or files.
//
// # Concurrency
//
// Every function is pure: it reads its arguments, which must not change
// while it runs, and returns new values. The big analyses split their
// work among GOMAXPROCS goroutines and wait for them.
//
// # Errors
//
// An analysis that needs a table the caller does not have (no LFTs) is an
// error saying which; a switch whose table is missing is counted and
// named in the result, never guessed.
package analyze
