package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// ibdiagConfig is infiniband-diags' configuration file
// (ibdiag_common.c's IBDIAG_CONFIG_GENERAL, Debian's path), which every
// tool reads before its command line; a test points it elsewhere.
var ibdiagConfig = "/etc/infiniband-diags/ibdiag.conf"

// optConfig is -z/--config FILE: another configuration file, read where
// the option stands on the command line.
const optConfig = "config"

// configOption is -z as ibdiag_common's common options list it.
var configOption = Option{Short: 'z', Long: optConfig, Arg: "<config>", Help: "use config file, default: " + ibdiagConfig}

// configKeys are the settings of a configuration file ibscript reads,
// each the option it stands for, in the order read_ibdiag_config tries
// them (each name a prefix: "timeout_ms=" is timeout, as strncmp reads
// it). MLX_EPI (libibnetdisc's MlnxExtPortInfo queries, which ibscript
// always makes) and nd_format (read by no tool) are not taken.
var configKeys = []struct{ name, key string }{
	{"CA", optCA},
	{"Port", optPort},
	{"timeout", optTimeout},
	{"m_key", optMKey},
	{"sa_key", "smkey"},
}

// readIBDiagConfig reads a configuration file as read_ibdiag_config does:
// lines of NAME=VALUE (each 1023 bytes at most: fgets' pieces), '#'
// lines and blank lines skipped, a name's first '=' ending it (leading
// '='s skipped, as strtok does), the value the rest of the line. It
// returns the settings as option values, in file order.
func readIBDiagConfig(r io.Reader) ([]OptionValue, error) {
	var out []OptionValue
	br := bufio.NewReader(r)
	for {
		line, err := readPiece(br, 1023)
		if len(line) > 0 {
			out = append(out, configLine(strings.TrimSuffix(line, "\n"))...)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// readPiece is fgets: up to n bytes, through the first newline.
func readPiece(br *bufio.Reader, n int) (string, error) {
	var b bytes.Buffer
	for b.Len() < n {
		c, err := br.ReadByte()
		if err != nil {
			return b.String(), err
		}
		b.WriteByte(c)
		if c == '\n' {
			break
		}
	}
	return b.String(), nil
}

// configLine is one line's setting, if it names one.
func configLine(line string) []OptionValue {
	line, _, _ = strings.Cut(line, "\x00") // C strings end at a NUL
	if line == "" || line[0] == '#' {
		return nil
	}
	name, value, ok := strings.Cut(strings.TrimLeft(line, "="), "=")
	if !ok || name == "" || value == "" {
		// No value: read_ibdiag_config would hand strtok's NULL on.
		return nil
	}
	for _, k := range configKeys {
		if strings.HasPrefix(name, k.name) {
			return []OptionValue{{Key: k.key, Value: value}}
		}
	}
	return nil
}

// applyConfig sets the options ibdiag.conf and each -z file set, as the
// C tools read them: the default file first, then the command line in
// order, a -z file where it stands; the last setting of each wins. A
// file that cannot be read is a warning on stderr (the C tools pass it
// over in silence); a missing default file says nothing, as there.
func (inv *Invocation) applyConfig() {
	has := map[string]bool{}
	for _, o := range inv.Tool.options() {
		has[o.Key()] = true
	}
	if !has[optConfig] {
		return
	}
	set := map[string]string{}
	apply := func(path string, explicit bool) {
		f, err := topo.OpenFile(path)
		if err != nil {
			if explicit {
				fmt.Fprintf(inv.Stderr, "%s: -z %s: %v; its settings are not used\n", inv.Prog, path, err)
			}
			return
		}
		defer f.Close()
		vs, err := readIBDiagConfig(f)
		if err != nil {
			fmt.Fprintf(inv.Stderr, "%s: config %s: %v\n", inv.Prog, path, err)
		}
		for _, v := range vs {
			if has[v.Key] {
				set[v.Key] = v.Value
			}
		}
	}
	apply(ibdiagConfig, false)
	for _, ov := range inv.order {
		if ov.Key == optConfig {
			apply(ov.Value, true)
		} else if _, ok := set[ov.Key]; ok {
			set[ov.Key] = ov.Value // given after the file that set it
		}
	}
	for k, v := range set {
		inv.vals[k] = []string{v}
	}
}
