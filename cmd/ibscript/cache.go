package main

import (
	"fmt"

	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/ibndcache"
)

// loadCache reads libibnetdisc's cache file (--load-cache, --diff,
// --filterdownports) into a fabric.
func loadCache(name string) (*topo.Fabric, error) {
	_, f, err := loadCacheFile(name)
	return f, err
}

// loadCacheFile is loadCache also returning the file's records.
func loadCacheFile(name string) (*ibndcache.File, *topo.Fabric, error) {
	cf, err := ibndcache.Read(name)
	if err != nil {
		return nil, nil, err
	}
	f, err := cf.Fabric(name)
	if err != nil {
		return nil, nil, err
	}
	return cf, f, nil
}

// writeCache writes the fabric as libibnetdisc's cache file (--cache),
// its header recording maxHops.
func writeCache(name string, f *topo.Fabric, maxHops int) error {
	cf, err := ibndcache.FromFabric(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	cf.MaxHops = uint32(maxHops)
	return cf.Write(name)
}

// cacheExit ends a tool as the C tool's IBEXIT(msg) does (ibExit: the
// iberror line on stdout, status 255), then says on stderr what went
// wrong underneath (the file, and the offset at fault), which the C
// tools keep to themselves.
func cacheExit(inv *Invocation, msg string, err error) int {
	if inv.clearProgress != nil {
		inv.clearProgress()
	}
	code := ibExit(inv, msg)
	inv.Errorf("%v", err)
	return code
}

// loadCacheOption loads --load-cache's cache as iblinkinfo and
// ibqueryerrors do: refused with -D's route (path), and a cache that does
// not load said as they say it. false: said, the tool exits.
func loadCacheOption(inv *Invocation, path []uint8) (*topo.Fabric, bool) {
	if path != nil {
		inv.Errorf("Cannot specify cache and direct route path")
		return nil, false
	}
	f, err := loadCache(inv.Value("load-cache"))
	if err != nil {
		fmt.Fprintln(inv.Stderr, "loading cached fabric failed")
		inv.Errorf("--load-cache: %v", err)
		return nil, false
	}
	return f, true
}

// usageErr is a command-line error the C tool answers with its usage
// (status 2): usageError prints it.
type usageErr struct{ err error }

func (e *usageErr) Error() string { return e.err.Error() }
