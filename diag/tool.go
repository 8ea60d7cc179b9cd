package diag

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
)

// Tool is one infiniband-diags tool as one value: its names, its
// options (a struct whose field tags say how the C tool spells each one
// and what Lua calls it), its Run and its text writer (its JSON is the
// value Run returns). The command line (cmd/ibscript) and the Lua diag
// module adapt every Tool the same way, so a new tool is its file in this
// package plus its line in Tools.
//
// An options struct's fields are tagged:
//
//	flag:"s,state"  the C tool's short letter and long name (either may
//	                be empty: "s," or ",node-name"); the field is an
//	                option of the command line
//	pos:"0"         the field is the command line's Nth argument
//	                ("*": the arguments from there on, a []string)
//	arg:"<0-3>"     the option's argument in --help (none: a flag)
//	help:"..."      the option's --help line
//	lua:"state"     the key of the Lua function's option table ("-": not
//	                offered to Lua, as a key's value never is)
//	strict:"true"   a number option's value must be a whole number the
//	                field holds (the C tool's strtoull with an end check);
//	                otherwise it is read as strtoull reads it
//	max:"15"        the largest value a number keeps (the C tool's
//	                mask: larger values are cut to it on the command
//	                line, refused in Lua); default the field type's
//
// Field types: bool (a flag; Lua boolean), an unsigned or signed integer
// (an option's value read as strtoull(s, NULL, 0) reads it, the front
// number; an argument's as strtol; a Lua number), string, []string (pos
// "*"; a Lua string or list of strings), *engine.Target (an address
// argument (or engine.Target), read and resolved as Env.Resolve does with -L, -G or -D; a
// Lua LID or target string).
type Tool struct {
	// Name is the C tool's name: the command word and the link name.
	Name string
	// Lua is the function's name in the Lua diag module.
	Lua string
	// Summary is the line `ibscript tools` shows.
	Summary string
	// Args is the usage's synopsis after "[options]".
	Args string
	// Exclude lists the infiniband-diags common options (short letters or
	// long names, separated by commas) the C tool does not take.
	Exclude string
	// MinArgs is how many arguments the tool needs; Want says which, in
	// the usage error a shorter command line gets (Lua: the keys of
	// those places are required).
	MinArgs int
	Want    string
	// MaxArgs, when not 0, is how many arguments the tool reads: the
	// command line warns of the rest and drops them, as the C tool
	// ignores them.
	MaxArgs int
	// Unresolved is the C tool's IBEXIT phrase for an address argument it
	// cannot read or resolve, followed by the argument; "" is "can't
	// resolve destination port".
	Unresolved string
	// Check, when set, looks at the options (from NewOptions) once the
	// options and the arguments but addresses are read, before an
	// address is resolved: what the C tool refuses before it sends
	// anything. A *UsageError is the command line's usage error (status
	// 2), anything else ends the tool as Run's errors do.
	Check func(opts any) error
	// Combined, when not "", is the long name of the flag that makes the
	// address argument a combined route (smpquery -c) when it comes after
	// -L, -G and -D (the C tools' ibd_dest_type is the last given): that
	// argument and the one after it, joined by a space ("(null)" when
	// there is none, as glibc prints the C tool's NULL), cut to 63 bytes
	// and read by ParseCombined; the later arguments move one place on.
	Combined string
	// Script, when not "", is the usage a shell-script tool (ibstatus)
	// prints on stdout, exit status 255, for -h as its first argument.
	Script string
	// ScriptStatus is the exit status of the script's usage (0: 255, the
	// shell scripts'; ibidsverify.pl's usage_and_exit: 2).
	ScriptStatus int
	// Getopts, when not "", is a Perl script's getopts() spec
	// ("hRC:P:"): its leading options are read as Getopt::Std reads them,
	// and -h, an unknown option or a missing value print Script.
	Getopts string
	// Unaddressed, when set, says from the options (once Check passed)
	// that the address arguments are not read at all, as the C tool
	// does not resolve them then (ibsysstat -S serves whatever its
	// arguments say).
	Unaddressed func(opts any) bool
	// Offline marks a tool that reads and writes files only
	// (ibcacheedit): no fabric is opened for it, and its Env has no
	// Session.
	Offline bool
	// Example are arguments of a run on the bundled simulated fabric,
	// validated against its JSON schema (docs/diag/NAME.schema.json) by
	// cmd/ibscript's TestToolSchemas; nil: none.
	Example []string
	// LuaDoc is the Lua function's reference line; LuaExample a chunk
	// using it, run by bindings' TestExamples.
	LuaDoc, LuaExample string

	options  reflect.Type // the options struct
	defaults any          // *options with the C tool's defaults
	run      func(ctx context.Context, env *Env, opts any) (any, error)
	text     func(w io.Writer, data any) error
	specs    []OptionSpec
}

// NewTool makes t a Tool whose options are O (defaults: the values the C
// tool starts with), whose data is *R, gathered by run and printed by
// text. A malformed tag is a programming error: NewTool panics, and
// diag's tests make every tool in Tools.
func NewTool[O, R any](t Tool, defaults O, run func(context.Context, *Env, O) (*R, error), text func(io.Writer, *R) error) *Tool {
	t.options = reflect.TypeFor[O]()
	t.defaults = &defaults
	t.run = func(ctx context.Context, env *Env, opts any) (any, error) {
		r, err := run(ctx, env, *opts.(*O))
		if r == nil {
			return nil, err
		}
		return r, err
	}
	t.text = func(w io.Writer, data any) error { return text(w, data.(*R)) }
	specs, err := optionSpecs(t.options)
	if err != nil {
		panic(fmt.Sprintf("diag: tool %s: %v", t.Name, err))
	}
	t.specs = specs
	return &t
}

// ScriptFatal is a shell-script tool's fatal(): "Fatal error:  MSG" on
// stdout after what it printed, exit status 255.
type ScriptFatal struct{ Msg string }

func (e *ScriptFatal) Error() string { return "Fatal error:  " + e.Msg }

// BuilderText adapts a writer that prints into a strings.Builder (the
// point-query tools') to NewTool's text.
func BuilderText[R any](write func(*strings.Builder, *R)) func(io.Writer, *R) error {
	return func(w io.Writer, r *R) error {
		var b strings.Builder
		write(&b, r)
		_, err := io.WriteString(w, b.String())
		return err
	}
}

// NewOptions returns a new options value (a pointer to the tool's
// options struct) holding the C tool's defaults.
func (t *Tool) NewOptions() any {
	v := reflect.New(t.options)
	v.Elem().Set(reflect.ValueOf(t.defaults).Elem())
	return v.Interface()
}

// Run gathers the tool's data with opts (from NewOptions): a pointer to
// the data, which --format json prints, or nil with the error. An error
// may come with data (a partial discovery, DiscoveryErrors).
func (t *Tool) Run(ctx context.Context, env *Env, opts any) (any, error) {
	return t.run(ctx, env, opts)
}

// WriteText prints data (from Run) as the C tool prints it.
func (t *Tool) WriteText(w io.Writer, data any) error { return t.text(w, data) }

// Options describes the tool's options, in the struct's order.
func (t *Tool) Options() []OptionSpec { return t.specs }

// OptionKind is what an option's field holds.
type OptionKind int

const (
	OptFlag    OptionKind = iota // bool
	OptNumber                    // an integer
	OptString                    // string
	OptStrings                   // []string, the remaining arguments
	OptTarget                    // *engine.Target, an address
)

// PosRest is OptionSpec.Pos of the field that takes every argument from
// its place on (pos:"*"); it follows the numbered ones.
const PosRest = 1 << 16

// NumberedArgs is how many arguments specs number (pos:"0", "1", ...):
// where a pos:"*" field's arguments start.
func NumberedArgs(specs []OptionSpec) int {
	n := 0
	for _, s := range specs {
		if s.Pos >= 0 && s.Pos != PosRest {
			n = max(n, s.Pos+1)
		}
	}
	return n
}

// OptionSpec is one field of a tool's options struct, read from its tags.
type OptionSpec struct {
	Short byte   // the C tool's short letter, 0 for none
	Long  string // its long name, "" for none
	Arg   string // the argument's name in --help, "" for a flag
	Help  string
	Lua   string // the Lua option table's key, "" when Lua does not take it
	// Pos is the argument's index for a positional field (PosRest for
	// pos:"*" after the numbered ones), -1 for an option.
	Pos  int
	Kind OptionKind
	Max  uint64 // a number's largest value
	// Signed is an integer field of a signed type.
	Signed bool
	// Strict: the option's value must be a whole number (strict tag).
	Strict bool

	index int
}

// Key is how the command line names the option: its long name, else its
// short letter (cmd/ibscript's Option.Key).
func (s *OptionSpec) Key() string {
	if s.Long != "" {
		return s.Long
	}
	return string(s.Short)
}

// SetBool sets a flag's field of opts (from NewOptions).
func (s *OptionSpec) SetBool(opts any, v bool) { s.field(opts).SetBool(v) }

// SetString sets a string field.
func (s *OptionSpec) SetString(opts any, v string) { s.field(opts).SetString(v) }

// SetStrings sets a []string field.
func (s *OptionSpec) SetStrings(opts any, v []string) { s.field(opts).Set(reflect.ValueOf(v)) }

// SetTarget sets an address field.
func (s *OptionSpec) SetTarget(opts any, t engine.Target) {
	f := s.field(opts)
	if f.Kind() == reflect.Pointer {
		f.Set(reflect.ValueOf(&t))
		return
	}
	f.Set(reflect.ValueOf(t))
}

// Warner is a tool's data that carries warnings the command line prints
// on stderr before the data (ibportstate's).
type Warner interface{ ToolWarnings() []string }

// SetNumber sets an integer field to v, which the caller has checked
// against Max (a negative value of a signed field is its two's
// complement, as strtol's result in the C tool's int).
func (s *OptionSpec) SetNumber(opts any, v uint64) {
	f := s.field(opts)
	if f.Kind() == reflect.Pointer {
		// An option whose 0 is a value, not its absence: set when given.
		p := reflect.New(f.Type().Elem())
		f.Set(p)
		f = p.Elem()
	}
	if s.Signed {
		f.SetInt(int64(v))
		return
	}
	f.SetUint(v)
}

// ReadOption reads an option's value as the C tools read a number
// (strtoull(s, NULL, 0): the number at the front, 0 when there is none),
// cut to Max as the C tool's mask cuts it.
func (s *OptionSpec) ReadOption(text string) uint64 { return ParseMask(text) & s.Max }

// ReadStrict reads a strict option's value: a whole number (0x hex, 0
// octal or decimal) of at most Max, else an error naming the option as
// the command line spells it (opt) and its width.
func (s *OptionSpec) ReadStrict(opt, text string) (uint64, error) {
	v, err := strconv.ParseUint(text, 0, 64)
	if err != nil || v > s.Max {
		return 0, fmt.Errorf("%s: not a %d-bit number", opt, bits.Len64(s.Max))
	}
	return v, nil
}

// ReadArg reads an argument as the C tools read a number argument
// (strtol(s, NULL, 0)), cut to Max.
func (s *OptionSpec) ReadArg(text string) uint64 {
	v := uint64(int64(ParsePortArg(text)))
	if s.Signed {
		return v // the C tool's int as strtol left it
	}
	return v & s.Max
}

func (s *OptionSpec) field(opts any) reflect.Value {
	return reflect.ValueOf(opts).Elem().Field(s.index)
}

var targetTypes = []reflect.Type{reflect.TypeFor[*engine.Target](), reflect.TypeFor[engine.Target]()}

// optionSpecs reads the tags of an options struct.
func optionSpecs(t reflect.Type) ([]OptionSpec, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("options %s: want a struct", t)
	}
	var out []OptionSpec
	for i := range t.NumField() {
		f := t.Field(i)
		flag, isFlag := f.Tag.Lookup("flag")
		pos, isPos := f.Tag.Lookup("pos")
		if !isFlag && !isPos {
			continue // not an option (ibaddr's derived fields)
		}
		s := OptionSpec{Arg: f.Tag.Get("arg"), Help: f.Tag.Get("help"), Lua: f.Tag.Get("lua"), Pos: -1, index: i,
			Strict: f.Tag.Get("strict") == "true"}
		switch {
		case isFlag && isPos:
			return nil, fmt.Errorf("field %s: both flag and pos", f.Name)
		case isFlag:
			short, long, _ := strings.Cut(flag, ",")
			if len(short) > 1 || short == "" && long == "" {
				return nil, fmt.Errorf("field %s: flag %q: want \"x,long\"", f.Name, flag)
			}
			if short != "" {
				s.Short = short[0]
			}
			s.Long = long
		case pos == "*":
			s.Pos = PosRest
		default:
			n, err := strconv.Atoi(pos)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("field %s: pos %q: want an index or \"*\"", f.Name, pos)
			}
			s.Pos = n
		}
		ft := f.Type
		if k := ft.Kind(); k == reflect.Pointer && ft.Elem().Kind() >= reflect.Uint && ft.Elem().Kind() <= reflect.Uint64 {
			ft = ft.Elem() // *uint64: nil when not given (CC_Key's 0 is a key)
		}
		switch k := ft.Kind(); {
		case slices.Contains(targetTypes, f.Type):
			s.Kind = OptTarget
		case k == reflect.Bool:
			s.Kind = OptFlag
		case k == reflect.String:
			s.Kind = OptString
		case k == reflect.Slice && f.Type.Elem().Kind() == reflect.String:
			s.Kind = OptStrings
		case k >= reflect.Int && k <= reflect.Int64:
			s.Kind, s.Signed, s.Max = OptNumber, true, 1<<(ft.Bits()-1)-1
		case k >= reflect.Uint && k <= reflect.Uint64:
			s.Kind, s.Max = OptNumber, 1<<ft.Bits()-1
			if ft.Bits() == 64 {
				s.Max = ^uint64(0)
			}
		default:
			return nil, fmt.Errorf("field %s: type %s is no option's", f.Name, f.Type)
		}
		if m := f.Tag.Get("max"); m != "" {
			v, err := strconv.ParseUint(m, 0, 64)
			if err != nil || v > s.Max {
				return nil, fmt.Errorf("field %s: max %q: want a number the field holds", f.Name, m)
			}
			s.Max = v
		}
		if (s.Kind == OptFlag) != (s.Arg == "" && s.Pos < 0) {
			return nil, fmt.Errorf("field %s: a bool is a flag without arg, every other option has one", f.Name)
		}
		if (s.Kind == OptStrings) != (s.Pos == PosRest) {
			return nil, fmt.Errorf("field %s: pos \"*\" is a []string's, and a []string is pos \"*\"", f.Name)
		}
		out = append(out, s)
	}
	return out, nil
}
