package bindings

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/topo"
)

// Files is which files a script may read and write (docs/security.md):
// those under its roots, the paths the user named, or any with All. Every
// file access from Lua goes through it: dofile, loadfile, require's
// search, fabric.load (and the files a topology includes), fabric.save
// and its node_name_map, plan.thresholds.
type Files struct {
	all   bool
	roots []string // absolute, symlinks resolved
}

// ErrFileNotAllowed is wrapped by the error of a file access outside the
// paths a run may use.
var ErrFileNotAllowed = errors.New("outside the paths this run may use")

// NewFiles allows the files under each root (a directory and what it
// holds, or one file), or every file when all is set. A root that does not
// exist yet is allowed as the path it names.
func NewFiles(all bool, roots ...string) (*Files, error) {
	f := &Files{all: all}
	for _, r := range roots {
		if r == "" {
			continue
		}
		abs, err := resolve(r)
		if err != nil {
			return nil, err
		}
		f.roots = append(f.roots, abs)
	}
	return f, nil
}

// resolve makes path absolute and resolves the symbolic links of the
// longest part of it that exists, so that a link under an allowed
// directory cannot lead out of it.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest), nil
		}
		if p == filepath.Dir(p) {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// Check returns nil when path may be read or written, else an error that
// names it and the flags that widen the set.
func (f *Files) Check(path string) error {
	if f == nil || f.all {
		return nil
	}
	real, err := resolve(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range f.roots {
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil
		}
	}
	return fmt.Errorf("%s: %w", path, ErrFileNotAllowed)
}

// Open opens path for reading when it may be read.
func (f *Files) Open(path string) (io.ReadCloser, error) {
	if err := f.Check(path); err != nil {
		return nil, err
	}
	return os.Open(path)
}

// ReadFile reads path when it may be read.
func (f *Files) ReadFile(path string) ([]byte, error) {
	if err := f.Check(path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// WriteFile writes path when it may be written.
func (f *Files) WriteFile(path string, b []byte, perm os.FileMode) error {
	if err := f.Check(path); err != nil {
		return err
	}
	return os.WriteFile(path, b, perm)
}

// filesKey is the registry field holding a state's Files (LoadFile and
// require find it there).
const filesKey = "ibscript.files"

func setFiles(L *lua.LState, f *Files) {
	ud := L.NewUserData()
	ud.Value = f
	L.SetField(L.Get(lua.RegistryIndex), filesKey, ud)
}

// filesOf returns L's Files; nil (every file) when the host set none.
func filesOf(L *lua.LState) *Files {
	if ud, ok := L.GetField(L.Get(lua.RegistryIndex), filesKey).(*lua.LUserData); ok {
		if f, ok := ud.Value.(*Files); ok {
			return f
		}
	}
	return nil
}

var syntaxLine = regexp.MustCompile(`line:(\d+)`)

// HideSource keeps the parser's message of a file that failed to compile
// only when the file is named *.lua: any other file (/etc/shadow) read as
// Lua would show its first token in the message. Its line is kept. Hosts
// apply it to the script files they load themselves.
func HideSource(path string, err error) error {
	if err == nil || strings.HasSuffix(path, ".lua") {
		return err
	}
	var ae *lua.ApiError
	if !errors.As(err, &ae) || ae.Type != lua.ApiErrorSyntax {
		return err
	}
	line := "?"
	if m := syntaxLine.FindStringSubmatch(errorMessage(err)); m != nil {
		line = m[1]
	}
	msg := fmt.Sprintf("%s:%s: not Lua source (the parser's message is shown only for files named *.lua)", path, line)
	return &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(msg)}
}

// LoadTopology is topo.Load of a file the Files allow, the files its
// include directives name checked too.
func (f *Files) LoadTopology(path string) (*topo.Fabric, error) {
	if err := f.Check(path); err != nil {
		return nil, err
	}
	return (&topo.Parser{Open: f.Open}).Load(path)
}
