package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/fabric/ibsim"
)

// openIbsim opens the "ibsim:" backend. rest is what follows "ibsim:" in
// the URI: [SOCKNAME][?node=NAME&nodes=A,B&issm=1&server=HOST[:PORT]].
// nodes lists the nodes a script may open ports on by name (RDMA CM
// endpoints on several hosts: with issm=1 ibsim forwards their GMPs). SOCKNAME
// defaults to $IBSIM_SOCKNAME, then "sim"; node to $SIM_HOST (empty: ibsim's
// default node); server selects ibsim's UDP mode (ibsim -r), defaulting to
// $IBSIM_SERVER_NAME[:$IBSIM_SERVER_PORT]. The attachment takes one of
// ibsim's 10 client slots; backend.Close (also on SIGINT/SIGTERM, which
// cancel ctx and unwind to it) gives it back.
func openIbsim(ctx context.Context, c *config, rest string, stderr io.Writer) (*backend, error) {
	sock, query, _ := strings.Cut(rest, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("--fabric %s: bad query: %v", c.fabricURI, err)
	}
	opts := ibsim.Options{Node: os.Getenv("SIM_HOST"), Logger: c.logger, UnixQueueLen: unixQueueLen()}
	if h := os.Getenv("IBSIM_SERVER_NAME"); h != "" {
		opts.Server = h
		if p := os.Getenv("IBSIM_SERVER_PORT"); p != "" {
			opts.Server = h + ":" + p
		}
	}
	for k := range q {
		v := q.Get(k)
		switch k {
		case "node":
			opts.Node = v
		case "issm":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("--fabric %s: bad issm value %q", c.fabricURI, v)
			}
			opts.ISSM = b
		case "server":
			opts.Server = v
		case "nodes":
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					opts.Nodes = append(opts.Nodes, n)
				}
			}
		default:
			return nil, fmt.Errorf("--fabric %s: unknown option %q (want node, nodes, issm, server)", c.fabricURI, k)
		}
	}
	if sock == "" {
		sock = os.Getenv("IBSIM_SOCKNAME") // empty: ibsim.DefaultSockName
	}
	if opts.Server == "" {
		leaveACore()
	}
	f := ibsim.NewFabric(sock, &opts)
	b := &backend{fab: f}
	b.tr, err = f.Open(ctx, "", 0)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("--fabric %s: %w%s", c.fabricURI, err, flagHint(err))
	}
	err = c.newSession(b)
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// leaveACore lowers GOMAXPROCS to one below the number of CPUs (at least
// one) and keeps the process's threads off one CPU (keepOffACPU) unless
// $GOMAXPROCS says otherwise; it returns keepOffACPU's undo. On a unix socket ibsim runs on
// this host and answers one MAD at a time on one core, so its speed is
// the sweep's; with a P per CPU the Go scheduler's spinning threads
// between our goroutines' hand-offs took cores from it. Measured on 2
// CPUs: iblinkinfo of a 2,000-node fat tree took 0.10 s (median of 8)
// with GOMAXPROCS=1 and 0.13 s with 2; an in-process discovery 62-78 ms
// against 76-95 ms, for the same ibsim CPU time.
func leaveACore() (undo func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return nil
	}
	if n := runtime.NumCPU() - 1; n < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(max(1, n))
	}
	return keepOffACPU()
}

// unixQueueLen reads net.unix.max_dgram_qlen, which bounds the window on an
// ibsim attachment whose socket could not be paired; 0 (the kernel's
// default of 10) when it cannot.
func unixQueueLen() int {
	b, err := os.ReadFile("/proc/sys/net/unix/max_dgram_qlen")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
