package bindings

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/topo"
)

// Files is which files a script may read and write (docs/security.md):
// those under its roots, the paths the user named, or any with All. Every
// file access from Lua goes through it: dofile, loadfile, require's
// search, fabric.load (and the files a topology includes), fabric.save
// and its node_name_map, plan.thresholds.
type Files struct {
	all       bool
	roots     []string // absolute, symlinks resolved
	protected []protectedFile
}

// protectedFile is one of the run's own files (Files.Protect).
type protectedFile struct {
	what, path string      // "--audit", its path resolved
	fi         os.FileInfo // nil when it did not exist yet
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

// Protect names the run's own files (its --audit, --record and report
// files, a cache), which a script may neither write nor replace, even
// where their directory is allowed and even with --allow-files: a plan
// cannot erase the audit trail of its Sets or break the recording. what
// names the flag in the refusal. A file that does not exist yet is
// protected by its path, one that does by its path and its identity
// (a hard link to it is refused too).
func (f *Files) Protect(what, path string) error {
	if path == "" {
		return nil
	}
	real, err := resolve(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, path, err)
	}
	fi, _ := os.Stat(real)
	f.protected = append(f.protected, protectedFile{what: what, path: real, fi: fi})
	return nil
}

// ProtectFile protects a file by its identity alone (the file stdout
// writes the report to).
func (f *Files) ProtectFile(what string, fi os.FileInfo) {
	f.protected = append(f.protected, protectedFile{what: what, fi: fi})
}

// protects returns the run's file that real (resolved) or fi is, if any.
func (f *Files) protects(real string, fi os.FileInfo) *protectedFile {
	if f == nil {
		return nil
	}
	for i, p := range f.protected {
		if p.path != "" && p.path == real {
			return &f.protected[i]
		}
		if fi == nil {
			continue
		}
		if p.fi != nil && os.SameFile(p.fi, fi) {
			return &f.protected[i]
		}
		if p.path != "" {
			if cur, err := os.Stat(p.path); err == nil && os.SameFile(cur, fi) {
				return &f.protected[i]
			}
		}
	}
	return nil
}

// maxLinks is how many symbolic links a path may go through, as Linux's
// MAXSYMLINKS (ELOOP past it).
const maxLinks = 40

// resolve makes path absolute and follows every symbolic link in it, a
// dangling one too (its target is where a file created through it would
// go), so that no link under an allowed directory leads out of it.
// Components past the first that does not exist are taken as written.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	sep := string(filepath.Separator)
	comps := strings.Split(strings.TrimPrefix(abs, sep), sep)
	cur, links := sep, 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			// Nothing exists past here: the rest names what would be made.
			return filepath.Join(append([]string{next}, comps...)...), nil
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%s: %w", path, syscall.ELOOP)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = sep
		}
		comps = append(strings.Split(target, sep), comps...)
	}
	return cur, nil
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
	return topo.OpenFile(path)
}

// ReadFile reads path when it may be read.
func (f *Files) ReadFile(path string) ([]byte, error) {
	if err := f.Check(path); err != nil {
		return nil, err
	}
	in, err := topo.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	b, err := io.ReadAll(io.LimitReader(in, MaxScriptSize+1))
	if err == nil && len(b) > MaxScriptSize {
		err = fmt.Errorf("%s: more than %d bytes, more than a script holds", path, MaxScriptSize)
	}
	return b, err
}

// MaxScriptSize is the largest file ReadFile (dofile, loadfile) reads.
const MaxScriptSize = 64 << 20

// WriteFile writes path when it may be written: never one of the run's
// own files (Protect), never through a symbolic link (O_NOFOLLOW; a new
// file is made with O_CREAT|O_EXCL, so a link planted between the check
// and the open is refused, not followed), never anything but a regular
// file.
func (f *Files) WriteFile(path string, b []byte, perm os.FileMode) error {
	if err := f.Check(path); err != nil {
		return err
	}
	real, err := resolve(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if p := f.protects(real, nil); p != nil {
		return fmt.Errorf("%s: %w (it is the run's %s file)", path, ErrRunFile, p.what)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w", path, ErrSymlink)
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if errors.Is(err, os.ErrExist) {
		// An existing file is replaced in place, as os.WriteFile does,
		// once it is known to be a regular file that is not the run's.
		out, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			if errors.Is(err, syscall.ELOOP) {
				return fmt.Errorf("%s: %w", path, ErrSymlink)
			}
			return err
		}
		fi, err := out.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("%s: not a regular file", path)
		} else if p := f.protects(real, fi); err == nil && p != nil {
			err = fmt.Errorf("%s: %w (it is the run's %s file)", path, ErrRunFile, p.what)
		}
		if err == nil {
			err = out.Truncate(0)
		}
		if err != nil {
			out.Close()
			return err
		}
	} else if err != nil {
		return err
	}
	_, err = out.Write(b)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// ErrRunFile is wrapped by the refusal to write one of the run's own
// files (Files.Protect); ErrSymlink by the refusal to write through a
// symbolic link.
var (
	ErrRunFile = errors.New("a script may not write the run's own files")
	ErrSymlink = errors.New("a script may not write through a symbolic link")
)

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
	text := errorMessage(err)
	if rest, ok := strings.CutPrefix(text, path+":"); ok {
		if n, _, ok := strings.Cut(rest, ":"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			line = n // Lua 5.1's "path:N: message"
		}
	} else if m := syntaxLine.FindStringSubmatch(text); m != nil {
		line = m[1]
	}
	msg := fmt.Sprintf("%s:%s: not Lua source (the parser's message is shown only for files named *.lua)", path, line)
	return &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(msg)}
}

// LoadTopology is topo.Load of a file the Files allow, the files its
// include directives name checked too.
func (f *Files) LoadTopology(ctx context.Context, path string) (*topo.Fabric, error) {
	if err := f.Check(path); err != nil {
		return nil, err
	}
	return (&topo.Parser{Open: f.Open, Context: ctx}).Load(path)
}
