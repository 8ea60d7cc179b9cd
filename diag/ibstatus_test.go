package diag_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad/smp"
)

// ibstatusScript is infiniband-diags' ibstatus (Debian's package).
const ibstatusScript = "/usr/sbin/ibstatus"

// runCIBStatus runs the C tools' ibstatus script on root as its
// /sys/class/infiniband: in a user and mount namespace (unshare -rm), a
// tmpfs on /sys/class with root bound at infiniband. It skips the test
// where the script or the namespaces are not to be had.
func runCIBStatus(t *testing.T, root string, args ...string) (string, int) {
	t.Helper()
	if _, err := os.Stat(ibstatusScript); err != nil {
		t.Skipf("no C ibstatus: %v (Debian package infiniband-diags)", err)
	}
	sh := `mount -t tmpfs none /sys/class && mkdir /sys/class/infiniband && mount --bind "$0" /sys/class/infiniband && exec ` + ibstatusScript + ` "$@"`
	cmd := exec.Command("unshare", append([]string{"-rm", "sh", "-c", sh, root}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee) && strings.Contains(errb.String(), "unshare:") || strings.Contains(errb.String(), "mount:"):
		t.Skipf("no user and mount namespace to give the script a sysfs: %s", strings.TrimSpace(errb.String()))
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Skipf("unshare: %v", err)
	return "", 0
}

// goIBStatus is `ibscript ibstatus ARGS` on the sysfs root: its stdout
// and exit status.
func goIBStatus(t *testing.T, root string, args ...string) (string, int) {
	t.Helper()
	r, err := diag.IBStatusRun(t.Context(), &diag.Env{SysFS: os.DirFS(root)}, diag.IBStatusOptions{Devices: args})
	var b strings.Builder
	if r != nil {
		if werr := diag.WriteIBStatus(&b, r); werr != nil {
			t.Fatal(werr)
		}
	}
	var fatal *diag.ScriptFatal
	switch {
	case errors.As(err, &fatal):
		fmt.Fprintln(&b, fatal)
		return b.String(), 255
	case err != nil:
		t.Fatal(err)
	}
	return b.String(), 0
}

// writeTree writes fsys's files under dir.
func writeTree(t *testing.T, dir string, fsys fs.FS) {
	t.Helper()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIBStatusMatchesScript: ibstatus as the C tools' script prints it,
// on the same sysfs tree: the files SimSysFS writes for simulated ports
// (IB QDR and SDR 1X, FDR, an HDR switch port, a down port), a RoCE
// port's as the kernel writes them (rxe), a port missing files (unknown,
// IB), an empty file; every device, one, DEV:PORT, a port that is not
// there, a device that is not (its fatal after what was printed).
func TestIBStatusMatchesScript(t *testing.T) {
	root := t.TempDir()
	qdr := smp.PortInfo{LinkWidthActive: 2, LinkSpeedActive: 4}
	sdr1x := smp.PortInfo{LinkWidthActive: 1, LinkSpeedActive: 1}
	fdr := smp.PortInfo{LinkWidthActive: 2, LinkSpeedActive: 4, LinkSpeedExtActive: 1}
	hdr := smp.PortInfo{LinkWidthActive: 16, LinkSpeedActive: 4, LinkSpeedExtActive: 4}
	port := func(ca string, n int, lid uint16, state, phys int) fabric.PortAttr {
		return fabric.PortAttr{CAName: ca, PortNum: n, GIDPrefix: 0xfe80 << 48, PortGUID: 0x0002c90300a00001 + uint64(n),
			LID: lid, SMLID: 1, State: state, PhysState: phys}
	}
	writeTree(t, root, diag.SimSysFS(
		[]fabric.PortAttr{port("mlx4_0", 1, 1, 4, 5), port("mlx4_0", 2, 0x1a, 4, 5), port("mlx5_0", 1, 0xbfff, 1, 3), port("sw0", 0, 2, 4, 5)},
		[]smp.PortInfo{qdr, sdr1x, fdr, hdr}))
	rxe := filepath.Join(root, "rxe0", "ports", "1")
	for name, text := range map[string]string{"gids/0": "fe80:0000:0000:0000:b8ce:f6ff:fe12:3456", "lid": "0x0", "sm_lid": "0x0",
		"state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "10 Gb/sec (1X FDR10)", "link_layer": "Ethernet"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(rxe, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rxe, name), []byte(text+"\n"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	bare := filepath.Join(root, "bare0", "ports", "1")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bare, "lid"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		nil, {"mlx4_0"}, {"mlx4_0:2"}, {"mlx5_0", "rxe0:1"}, {"sw0"}, {"bare0"}, {"mlx4_0:7"},
		{"mlx4_0:1", "nosuch", "rxe0"}, {"nosuch:1"}, {"mlx4_0:"}, {"a:b:1"},
	} {
		t.Run(strings.Join(append([]string{"ibstatus"}, args...), " "), func(t *testing.T) {
			cOut, cStatus := runCIBStatus(t, root, args...)
			gOut, gStatus := goIBStatus(t, root, args...)
			if cOut != gOut || cStatus != gStatus {
				t.Errorf("C (status %d):\n%s\nibscript (status %d):\n%s", cStatus, cOut, gStatus, gOut)
			}
		})
	}
}

// TestIBStatusSimulated: on the simulator ibstatus shows the local port
// (node001's, LID 1, its SM at LID 1) from its SMA's PortInfo, as the
// kernel's files would show it.
func TestIBStatusSimulated(t *testing.T) {
	env, f := simEnv(t)
	env.Ports = f.Ports
	r, err := diag.IBStatusRun(t.Context(), env, diag.IBStatusOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := diag.WriteIBStatus(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "Infiniband device 'node001' port 1 status:\n" +
		"\tdefault gid:\t fe80:0000:0000:0000:0002:c903:00a0:0001\n" +
		"\tbase lid:\t 0x1\n\tsm lid:\t\t 0x1\n\tstate:\t\t 4: ACTIVE\n\tphys state:\t 5: LinkUp\n" +
		"\trate:\t\t 40 Gb/sec (4X QDR)\n\tlink_layer:\t InfiniBand\n\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	if _, err := diag.IBStatusRun(t.Context(), env, diag.IBStatusOptions{Devices: []string{"nosuch"}}); err == nil ||
		err.Error() != "Fatal error:  device 'nosuch': sys files not found (/sys/class/infiniband/nosuch/ports)" {
		t.Errorf("nosuch: %v", err)
	}
}
