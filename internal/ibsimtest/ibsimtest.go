// Package ibsimtest is the project's ibsim harness for tests: it starts
// ibsim (Debian ibsim-utils) on a topology file, optionally OpenSM under
// the umad2sim LD_PRELOAD shim, waits until the fabric is up, runs the
// infiniband-diags tools under umad2sim, and stops only what it started.
//
// Every wait is bounded. Children get SIGKILL when the test process dies
// (Pdeathsig), so a test binary killed by its -timeout does not leave an
// ibsim or OpenSM behind.
package ibsimtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvRequire is the variable that turns every "ibsim not installed" skip
// into a failure (CI sets it after installing the packages).
const EnvRequire = "IBSCRIPT_TEST_IBSIM"

// Tools the harness needs, by package.
var (
	ibsimBin   = "ibsim"
	opensmBin  = "opensm"
	diagsProbe = "ibnetdiscover"
)

// Umad2sim returns the path of libumad2sim.so, from the known install
// locations or dpkg.
func Umad2sim() (string, error) {
	globs := []string{"/usr/lib/*/umad2sim/libumad2sim.so", "/usr/lib/umad2sim/libumad2sim.so", "/usr/local/lib/umad2sim/libumad2sim.so"}
	for _, g := range globs {
		if m, _ := filepath.Glob(g); len(m) > 0 {
			return m[0], nil
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dpkg", "-L", "libumad2sim0").Output()
	if err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasSuffix(l, "/libumad2sim.so") {
				if _, err := os.Stat(l); err == nil {
					return l, nil
				}
			}
		}
	}
	return "", errors.New("libumad2sim.so not found (Debian package libumad2sim0, from ibsim-utils)")
}

// Available reports why the harness cannot run here, or nil.
func Available() error {
	var missing []string
	if _, err := exec.LookPath(ibsimBin); err != nil {
		missing = append(missing, "ibsim (ibsim-utils)")
	}
	if _, err := Umad2sim(); err != nil {
		missing = append(missing, "libumad2sim.so (ibsim-utils)")
	}
	if _, err := lookSbin(opensmBin); err != nil {
		missing = append(missing, "opensm (opensm)")
	}
	if _, err := lookSbin(diagsProbe); err != nil {
		missing = append(missing, "ibnetdiscover (infiniband-diags)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("not installed: %s (apt-get install ibsim-utils infiniband-diags opensm)", strings.Join(missing, ", "))
	}
	return nil
}

// lookSbin finds a program in PATH or the sbin directories, which a
// non-root PATH may lack.
func lookSbin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH or sbin", name)
}

// Require skips t when the packages are missing, or fails it when
// IBSCRIPT_TEST_IBSIM=1 says they must be there.
func Require(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("ibsim harness: %v, and %s=1", err, EnvRequire)
		}
		t.Skipf("ibsim harness: %v (set %s=1 to make this a failure)", err, EnvRequire)
	}
}

// Options configure Start. A nil *Options means defaults.
type Options struct {
	// NoSM starts ibsim alone: DR works, LID routing does not.
	NoSM bool
	// SMNode is the node OpenSM attaches to; empty: the first node.
	SMNode string
	// IbsimArgs are extra ibsim options (e.g. -N 4096 for big fabrics).
	IbsimArgs []string
	// Timeout bounds the bring-up; 0 means 60s.
	Timeout time.Duration
	// InitPorts is how many ports may stay in Init when the fabric is up:
	// OpenSM leaves a router's links (both ends) there.
	InitPorts int
	// OSMArgs are extra OpenSM options (e.g. --lmc 1).
	OSMArgs []string
	// UDPPort > 0 runs ibsim in its remote mode (-r -l UDPPort): UDP
	// control port UDPPort, data ports UDPPort+1..+10, on every address
	// (ibsim binds the wildcard). No SM is started (umad2sim's remote
	// mode is not what OpenSM is tested with here).
	UDPPort int
}

// Sim is one running ibsim (and OpenSM) started by Start.
type Sim struct {
	Dir      string // run directory: logs, scratch
	Sock     string // IBSIM_SOCKNAME
	Topology string // absolute path of the topology file
	Umad2sim string
	UDPPort  int // remote mode control port, or 0

	ibsim, osm       *proc
	console          io.WriteCloser // ibsim's stdin
	conMu            sync.Mutex
	logPath, errPath string
	osmLog           string
	markSeq          int
}

// proc is a started child and the goroutine waiting for it.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop sends sig, waits up to grace, then SIGKILLs and waits.
func (p *proc) stop(sig os.Signal, grace time.Duration) {
	if p == nil || !p.alive() {
		return
	}
	if sig != nil {
		_ = p.cmd.Process.Signal(sig)
	}
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

var sockSeq int
var sockMu sync.Mutex

// Start runs ibsim on topology in a fresh directory under dir (a temp dir
// when empty) with a unique socket name, then OpenSM unless opts.NoSM, and
// returns once OpenSM logged SUBNET UP and no port is left in Init or
// Armed. On any failure it stops what it started and the error quotes the
// logs.
func Start(ctx context.Context, dir, topology string, opts *Options) (s *Sim, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if err := Available(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	topo, err := filepath.Abs(topology)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(topo); err != nil {
		return nil, fmt.Errorf("ibsimtest: topology: %w", err)
	}
	if dir == "" {
		dir = os.TempDir()
	}
	rd, err := os.MkdirTemp(dir, "ibsim-")
	if err != nil {
		return nil, err
	}
	u, _ := Umad2sim()
	sockMu.Lock()
	sockSeq++
	sock := fmt.Sprintf("ibst%d.%d", os.Getpid(), sockSeq)
	sockMu.Unlock()
	s = &Sim{Dir: rd, Sock: sock, Topology: topo, Umad2sim: u,
		logPath: filepath.Join(rd, "ibsim.log"), errPath: filepath.Join(rd, "ibsim.err")}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if err := s.startIbsim(ctx, &o); err != nil {
		return s, err
	}
	if o.NoSM {
		return s, nil
	}
	return s, s.startOpenSM(ctx, o)
}

// startIbsim starts ibsim on s.Topology in s.Dir and waits until it listens
// (on its socket, or on o.UDPPort, which also sets o.NoSM).
func (s *Sim) startIbsim(ctx context.Context, o *Options) error {
	rd, sock, topo := s.Dir, s.Sock, s.Topology
	for _, d := range []string{"osm", "scratch"} {
		if err := os.MkdirAll(filepath.Join(rd, d), 0o755); err != nil {
			return err
		}
	}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	errf, err := os.Create(s.errPath)
	if err != nil {
		return err
	}
	defer errf.Close()
	ibsimPath, _ := exec.LookPath(ibsimBin)
	args := append([]string{"-s"}, o.IbsimArgs...)
	if o.UDPPort > 0 {
		args = append(args, "-r", "-l", strconv.Itoa(o.UDPPort))
		s.UDPPort = o.UDPPort
		o.NoSM = true
	}
	cmd := exec.Command(ibsimPath, append(args, topo)...)
	cmd.Dir = rd
	cmd.Env = append(os.Environ(), "IBSIM_SOCKNAME="+sock)
	cmd.Stdout, cmd.Stderr = logf, errf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	s.console = stdin
	if s.ibsim, err = startProc(cmd); err != nil {
		return fmt.Errorf("ibsimtest: start ibsim: %w", err)
	}
	return s.poll(ctx, "ibsim ready", func() (bool, error) {
		if !s.ibsim.alive() {
			return false, fmt.Errorf("ibsim exited during start-up: %v; %s", s.ibsim.err, s.tail(s.errPath))
		}
		ready := bytes.Contains(readFile(s.logPath), []byte("Network simulator ready"))
		if s.UDPPort > 0 {
			return ready && udpListed(s.UDPPort), nil
		}
		return ready && sockListed(sock), nil
	})
}

// startOpenSM starts OpenSM through umad2sim on s's ibsim and waits until the
// subnet is up: no port Armed, at most o.InitPorts in Init.
func (s *Sim) startOpenSM(ctx context.Context, o Options) error {
	rd, sock, u := s.Dir, s.Sock, s.Umad2sim
	osmBin, _ := lookSbin(opensmBin)
	od := filepath.Join(rd, "osm")
	s.osmLog = filepath.Join(od, "opensm.log")
	out, err := os.Create(filepath.Join(od, "opensm.out"))
	if err != nil {
		return err
	}
	defer out.Close()
	osm := exec.Command(osmBin, append([]string{"-d2", "-f", s.osmLog, "-s", "0"}, o.OSMArgs...)...)
	osm.Dir = od
	osm.Env = append(os.Environ(), "IBSIM_SOCKNAME="+sock, "LD_PRELOAD="+u,
		"SIM_HOST="+o.SMNode, "OSM_CACHE_DIR="+od, "OSM_TMP_DIR="+od)
	osm.Stdout, osm.Stderr = out, out
	if s.osm, err = startProc(osm); err != nil {
		return fmt.Errorf("ibsimtest: start opensm: %w", err)
	}
	var last string
	err = s.poll(ctx, "fabric up", func() (bool, error) {
		if !s.ibsim.alive() {
			return false, fmt.Errorf("ibsim died: %s", s.tail(s.errPath))
		}
		if !s.osm.alive() {
			return false, fmt.Errorf("opensm died: %v; %s", s.osm.err, s.tail(filepath.Join(od, "opensm.out")))
		}
		if !bytes.Contains(readFile(s.osmLog), []byte("SUBNET UP")) {
			return false, nil
		}
		st, err := s.PortStates(ctx)
		if err != nil {
			return false, err
		}
		last = fmt.Sprint(st)
		return st["Init"] <= o.InitPorts && st["Armed"] == 0 && st["Active"] > 0, nil
	})
	if err != nil && last != "" {
		err = fmt.Errorf("%w (ports %s)", err, last)
	}
	return err
}

func readFile(p string) []byte {
	b, _ := os.ReadFile(p)
	return b
}

func (s *Sim) tail(p string) string {
	b := readFile(p)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return fmt.Sprintf("%s: %q", filepath.Base(p), b)
}

// sockListed reports whether ibsim's control socket is bound.
func sockListed(sock string) bool {
	return bytes.Contains(readFile("/proc/net/unix"), []byte("@"+sock+":ctl@"))
}

// udpListed reports whether UDP sockets are bound to port (ibsim's
// control port) and the ten data ports after it: ibsim says it is ready
// before it binds them, and exits when one is taken.
func udpListed(port int) bool {
	table := readFile("/proc/net/udp")
	for p := port; p <= port+10; p++ {
		if !bytes.Contains(table, []byte(fmt.Sprintf(":%04X 00000000:0000", p))) {
			return false
		}
	}
	return true
}

// poll calls f every 20ms until it reports done, fails, or ctx ends.
func (s *Sim) poll(ctx context.Context, what string, f func() (bool, error)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := f()
		if err != nil {
			return fmt.Errorf("ibsimtest: waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("ibsimtest: waiting for %s in %s: %w", what, s.Dir, ctx.Err())
		case <-tick.C:
		}
	}
}

var promptRE = regexp.MustCompile(`^(sim( \(inactive\))?> )+`)

// Console runs one ibsim console command and returns its output (stdout
// between two comment markers, prompts removed).
func (s *Sim) Console(ctx context.Context, command string) (string, error) {
	s.conMu.Lock()
	defer s.conMu.Unlock()
	if s.ibsim == nil || !s.ibsim.alive() {
		return "", errors.New("ibsimtest: console: ibsim is not running")
	}
	s.markSeq++
	mark := fmt.Sprintf("ibst-mark-%d", s.markSeq)
	start := len(readFile(s.logPath))
	if _, err := fmt.Fprintf(s.console, "#%s<\n%s\n#%s>\n", mark, command, mark); err != nil {
		return "", fmt.Errorf("ibsimtest: console %q: %w", command, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var out string
	err := s.poll(ctx, "console "+command, func() (bool, error) {
		b := readFile(s.logPath)
		if len(b) < start {
			return false, nil
		}
		b = b[start:]
		i := bytes.Index(b, []byte("#"+mark+"<"))
		j := bytes.Index(b, []byte("#"+mark+">"))
		if i < 0 || j < 0 {
			if !s.ibsim.alive() {
				return false, errors.New("ibsim exited")
			}
			return false, nil
		}
		body := b[i+len(mark)+2 : j]
		var lines []string
		for _, l := range strings.Split(string(body), "\n") {
			l = promptRE.ReplaceAllString(l, "")
			if l != "" {
				lines = append(lines, l)
			}
		}
		out = strings.Join(lines, "\n")
		return true, nil
	})
	return out, err
}

// PortStates counts the ports of the console Dump by logical state.
func (s *Sim) PortStates(ctx context.Context) (map[string]int, error) {
	d, err := s.Console(ctx, "Dump")
	if err != nil {
		return nil, err
	}
	st := map[string]int{}
	for _, l := range strings.Split(d, "\n") {
		if !strings.Contains(l, "[") {
			continue
		}
		for _, k := range []string{"Active", "Init", "Armed", "Down"} {
			if strings.Contains(l, k+"/") {
				st[k]++
			}
		}
	}
	return st, nil
}

// Env is the environment of a C tool run under umad2sim attached to node.
func (s *Sim) Env(node string, issm bool) []string {
	env := []string{"IBSIM_SOCKNAME=" + s.Sock, "LD_PRELOAD=" + s.Umad2sim}
	if s.UDPPort > 0 {
		env = append(env, "IBSIM_SERVER_NAME=127.0.0.1", "IBSIM_SERVER_PORT="+strconv.Itoa(s.UDPPort))
	}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "SIM_HOST=") && !strings.HasPrefix(e, "SIM_SET_ISSM=") &&
			!strings.HasPrefix(e, "IBSIM_") && !strings.HasPrefix(e, "LD_PRELOAD=") {
			env = append(env, e)
		}
	}
	if node != "" {
		env = append(env, "SIM_HOST="+node)
	}
	if issm {
		env = append(env, "SIM_SET_ISSM=1")
	}
	return env
}

// KillGrace is how long a tool whose context ended has, after SIGTERM,
// before it gets SIGKILL (and how long its output pipes are waited for).
const KillGrace = 5 * time.Second

// Terminate makes cmd, when its context ends, get SIGTERM first and
// SIGKILL KillGrace later, so a tool that disconnects from ibsim on
// SIGTERM (ibscript's ibsim client, OpenSM) gives its client slot back;
// exec.CommandContext's default is SIGKILL at once.
func Terminate(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = KillGrace
}

// Command prepares a C tool under umad2sim attached to node, with its cwd
// in a fresh scratch directory (umad2sim writes ./sys-<pid>/ there). When
// ctx ends the tool gets SIGTERM, then SIGKILL (Terminate); either way
// it keeps its ibsim slot, which Release frees.
func (s *Sim) Command(ctx context.Context, node, tool string, args ...string) (*exec.Cmd, error) {
	p, err := lookSbin(tool)
	if err != nil {
		return nil, err
	}
	wd, err := os.MkdirTemp(filepath.Join(s.Dir, "scratch"), tool+"-")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Dir = wd
	cmd.Env = s.Env(node, false)
	cmd.SysProcAttr = childAttr()
	Terminate(cmd)
	return cmd, nil
}

// clientRE is a line of ibsim's console command Attached
// (list_connections): the slot and the client's ID, a umad2sim client's
// pid.
var clientRE = regexp.MustCompile(`(?m)^Client (\d+): pid (\d+) connected`)

// Release frees the ibsim client slot a tool from Command still holds
// after it ended by a signal. umad2sim sends DISCONNECT from an atexit
// handler only, which no signal death runs: a C tool sent SIGTERM, SIGINT
// or SIGKILL stays in ibsim's Attached list (seen with ibping -S) until
// ibsim next writes to it, and ibsim has 10 slots. Release finds the
// slot by the tool's pid and sends the console's "X <slot>". A tool that
// exited, or was never started, holds none.
func (s *Sim) Release(ctx context.Context, cmd *exec.Cmd) error {
	if cmd.Process == nil || cmd.ProcessState == nil || cmd.ProcessState.Exited() {
		return nil
	}
	out, err := s.Console(ctx, "Attached")
	if err != nil {
		return fmt.Errorf("ibsimtest: release %s's slot: %w", cmd.Path, err)
	}
	for _, m := range clientRE.FindAllStringSubmatch(out, -1) {
		if m[2] != strconv.Itoa(cmd.Process.Pid) {
			continue
		}
		if out, err := s.Console(ctx, "X "+m[1]); err != nil || out != "" {
			return fmt.Errorf("ibsimtest: release %s's slot %s: %v %s", cmd.Path, m[1], err, out)
		}
	}
	return nil
}

// Run runs a C tool under umad2sim attached to node (empty: ibsim's
// default node), bounded by ctx and 60s, and returns its stdout. A tool
// ended by a signal has its ibsim slot released.
func (s *Sim) Run(ctx context.Context, node, tool string, args ...string) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd, err := s.Command(cctx, node, tool, args...)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		err = errors.Join(err, s.Release(context.WithoutCancel(ctx), cmd))
		return out, fmt.Errorf("%s %s (SIM_HOST=%q): %w; stderr: %s", tool, strings.Join(args, " "), node, err, stderr.Bytes())
	}
	return out, nil
}

// StopSM stops OpenSM (SIGTERM, it detaches cleanly). The LIDs, LFTs and
// port states it programmed stay in ibsim, so LID routing keeps working:
// tests that add an issm client advertising IsSM use it, because OpenSM
// would then send that client SMInfo, which umad2sim tools crash on.
func (s *Sim) StopSM() { s.osm.stop(syscall.SIGTERM, 10*time.Second) }

// PauseSM stops OpenSM's process where it is (SIGSTOP): ibsim still
// hands it the SA's requests and nothing answers them, as an SM too busy
// to answer leaves them. The function returned lets it go on (SIGCONT);
// Stop works either way.
func (s *Sim) PauseSM() (resume func()) {
	if s.osm == nil || !s.osm.alive() {
		return func() {}
	}
	_ = s.osm.cmd.Process.Signal(syscall.SIGSTOP)
	return func() {
		if s.osm.alive() {
			_ = s.osm.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
}

// Alive reports whether ibsim is still running.
func (s *Sim) Alive() bool { return s.ibsim != nil && s.ibsim.alive() }

// Kill kills ibsim with SIGKILL (fault tests) and waits for it.
func (s *Sim) Kill() {
	if s.ibsim != nil {
		s.ibsim.stop(syscall.SIGKILL, 5*time.Second)
	}
}

// Stop stops OpenSM (SIGTERM; it detaches cleanly) and ibsim (Quit on the
// console, then signals), only the processes Start started. It is
// idempotent and bounded (at most ~20s).
func (s *Sim) Stop() {
	if s == nil {
		return
	}
	if s.osm != nil && s.osm.alive() {
		_ = s.osm.cmd.Process.Signal(syscall.SIGCONT) // paused (PauseSM): let SIGTERM in
	}
	s.osm.stop(syscall.SIGTERM, 10*time.Second)
	if s.ibsim != nil && s.ibsim.alive() {
		s.conMu.Lock()
		_, _ = io.WriteString(s.console, "Quit\n")
		s.conMu.Unlock()
		select {
		case <-s.ibsim.done:
		case <-time.After(3 * time.Second):
		}
		s.ibsim.stop(syscall.SIGTERM, 3*time.Second)
	}
	if s.console != nil {
		s.console.Close()
	}
}

// Shared keeps one Sim per topology for a test package.
type Shared struct {
	mu   sync.Mutex
	sims map[string]*Sim
	errs map[string]error
}

// Get returns the running Sim for topology, starting it on first use; it
// calls Require first. A failed start is remembered and fails every later
// caller the same way.
func (sh *Shared) Get(t testing.TB, topology string, opts *Options) *Sim {
	t.Helper()
	Require(t)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.sims == nil {
		sh.sims, sh.errs = map[string]*Sim{}, map[string]error{}
	}
	if s := sh.sims[topology]; s != nil {
		if !s.Alive() {
			t.Fatalf("shared ibsim for %s is dead; logs in %s", topology, s.Dir)
		}
		return s
	}
	if err := sh.errs[topology]; err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), "", topology, opts)
	if err != nil {
		sh.errs[topology] = err
		t.Fatal(err)
	}
	sh.sims[topology] = s
	return s
}

// StopAll stops every Sim started by Get and removes their directories
// unless keep.
func (sh *Shared) StopAll(keep bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for k, s := range sh.sims {
		s.Stop()
		if !keep {
			os.RemoveAll(s.Dir)
		}
		delete(sh.sims, k)
	}
}
