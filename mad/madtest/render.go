package madtest

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"strings"
)

var stringerType = reflect.TypeFor[fmt.Stringer]()

// Render writes a decoded value as text for golden files, one "Name: value"
// line per field in declaration order. Embedded structs are flattened,
// nested ones prefixed ("SMP.TID"); unsigned numbers show in decimal with
// their hex value in parentheses; byte arrays show as hex, or through their
// String method when they have one (mad.GID); other arrays list one element
// per line.
func Render(v any) string {
	var sb strings.Builder
	render(&sb, "", reflect.ValueOf(v))
	return sb.String()
}

func render(sb *strings.Builder, name string, v reflect.Value) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			fmt.Fprintf(sb, "%s: nil\n", name)
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct && v.Type().Implements(stringerType) && v.CanInterface() {
		fmt.Fprintf(sb, "%s: %s\n", name, v.Interface().(fmt.Stringer).String())
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !(f.Anonymous && f.Type.Kind() == reflect.Struct) {
				continue // embedded structs still promote their exported fields
			}
			sub := name
			if !f.Anonymous {
				sub = join(name, f.Name)
			}
			render(sb, sub, v.Field(i))
		}
	case reflect.Array, reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, v.Len())
			for i := range b {
				b[i] = byte(v.Index(i).Uint())
			}
			fmt.Fprintf(sb, "%s: %s\n", name, hex.EncodeToString(b))
			return
		}
		for i := range v.Len() {
			render(sb, fmt.Sprintf("%s[%d]", name, i), v.Index(i))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := v.Uint()
		if u > 9 {
			fmt.Fprintf(sb, "%s: %d (0x%x)\n", name, u, u)
		} else {
			fmt.Fprintf(sb, "%s: %d\n", name, u)
		}
	case reflect.String:
		fmt.Fprintf(sb, "%s: %q\n", name, v.String())
	default:
		fmt.Fprintf(sb, "%s: %v\n", name, v)
	}
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// TextDiff returns a line diff of want and got in "(-want +got)" form,
// with two lines of context around each change, or "" when they are equal.
func TextDiff(want, got string) string {
	if want == got {
		return ""
	}
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	// lcs[i][j] is the length of the longest common subsequence of a[i:], b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	const context = 2
	var sb strings.Builder
	skipped := false
	for k, l := range lines {
		near := false
		for d := max(0, k-context); d <= min(len(lines)-1, k+context); d++ {
			if lines[d].op != ' ' {
				near = true
				break
			}
		}
		if !near {
			skipped = true
			continue
		}
		if skipped {
			sb.WriteString("  ...\n")
			skipped = false
		}
		fmt.Fprintf(&sb, "%c %s\n", l.op, l.text)
	}
	if skipped {
		sb.WriteString("  ...\n")
	}
	return sb.String()
}
