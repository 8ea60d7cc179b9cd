package plan

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// maxTextResults is how many failures per check the text report lists.
const maxTextResults = 20

const (
	ansiRed     = "\x1b[31m"
	ansiGreen   = "\x1b[32m"
	ansiYellow  = "\x1b[33m"
	ansiMagenta = "\x1b[35m"
	ansiBold    = "\x1b[1m"
	ansiReset   = "\x1b[0m"
)

// WriteText writes the report for people: checks grouped by category,
// each with its counts, its failures and what it could not read (at most
// 20 of each), then a summary line "N checks passed, M failed, K skipped"
// (", E could not complete" when checks could not read what they
// needed). color adds ANSI colours.
func WriteText(w io.Writer, r *Report, color bool) error {
	bw := bufio.NewWriter(w)
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	title := r.Plan.Name
	if r.Plan.Description != "" {
		title += ": " + r.Plan.Description
	}
	fmt.Fprintln(bw, paint(ansiBold, title))
	if f := r.Fabric; f.Nodes > 0 || f.Backend != "" {
		fmt.Fprintf(bw, "fabric: %s\n", fabricLine(f))
	}
	for _, cat := range r.Categories() {
		fmt.Fprintf(bw, "%s\n", paint(ansiBold, "["+cat+"]"))
		for _, c := range r.Checks {
			if c.Category != cat {
				continue
			}
			switch c.Status {
			case Fail:
				fmt.Fprintf(bw, "  %s  %-32s %d ok, %d failed", paint(ansiRed, "FAIL"), c.Name, c.Passed, c.Failed)
				if c.Errors > 0 {
					fmt.Fprintf(bw, ", %d could not be read", c.Errors)
				}
				fmt.Fprintln(bw)
			case Error:
				fmt.Fprintf(bw, "  %s %-32s %d ok, %d could not be read\n", paint(ansiMagenta, "ERROR"), c.Name, c.Passed, c.Errors)
			case Skip:
				fmt.Fprintf(bw, "  %s  %-32s %s\n", paint(ansiYellow, "SKIP"), c.Name, skipMessage(c))
			default:
				fmt.Fprintf(bw, "  %s  %-32s %d ok", paint(ansiGreen, "PASS"), c.Name, c.Passed)
				if c.Skipped > 0 {
					fmt.Fprintf(bw, ", %d skipped", c.Skipped)
				}
				fmt.Fprintln(bw)
			}
			writeResults(bw, c, Fail, "", "", c.Failed)
			writeResults(bw, c, Error, "could not read: ", " could not be read", c.Errors)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(bw, "%s %s\n", paint(ansiRed, "run failed:"), r.Error)
	}
	fmt.Fprintf(bw, "%d checks passed, %d failed, %d skipped", r.Summary.Passed, r.Summary.Failed, r.Summary.Skipped)
	if r.Summary.Errors > 0 {
		fmt.Fprintf(bw, ", %d could not complete", r.Summary.Errors)
	}
	fmt.Fprintf(bw, " (%.2fs)\n", r.Duration)
	return bw.Flush()
}

// fabricLine is what the text report says of the fabric: its size, the
// backend and the local port, those known.
func fabricLine(f FabricInfo) string {
	var parts []string
	if f.Nodes > 0 {
		parts = append(parts, fmt.Sprintf("%d nodes, %d links", f.Nodes, f.Links))
	}
	if f.Backend != "" {
		parts = append(parts, "on "+f.Backend)
	}
	if f.CA != "" {
		parts = append(parts, fmt.Sprintf("from %s port %d", f.CA, f.Port))
	}
	return strings.Join(parts, ", ")
}

// writeResults writes the results of c with status st, each after prefix,
// at most maxTextResults of them, then how many more there are of total
// (with suffix).
func writeResults(bw *bufio.Writer, c *Check, st Status, prefix, suffix string, total int) {
	n := 0
	for _, res := range c.Results {
		if res.Status != st {
			continue
		}
		if n++; n > maxTextResults {
			fmt.Fprintf(bw, "          ... %d more%s\n", total-maxTextResults, suffix)
			break
		}
		fmt.Fprintf(bw, "          %s%s\n", prefix, resultText(res))
	}
}

// NoResult is what a check that recorded no result says: it is skipped,
// never passed (it checked nothing).
const NoResult = "no result recorded"

// skipMessage is why a skipped check was skipped.
func skipMessage(c *Check) string {
	if c.Skipped == 0 {
		return NoResult
	}
	return firstMessage(c, Skip)
}

func firstMessage(c *Check, s Status) string {
	for _, res := range c.Results {
		if res.Status == s {
			return res.Message
		}
	}
	return ""
}

func resultText(res Result) string {
	if res.Object == nil {
		return res.Message
	}
	o := res.Object.String()
	if res.Message == "" {
		return o
	}
	if res.Object.NodeDesc != "" && strings.Contains(res.Message, res.Object.NodeDesc) {
		return res.Message // it names the object already
	}
	return o + ": " + res.Message
}

// resultLines is the text of c's results of status st, each after
// prefix.
func resultLines(c *Check, st Status, prefix string) []string {
	var lines []string
	for _, res := range c.Results {
		if res.Status == st {
			lines = append(lines, prefix+resultText(res))
		}
	}
	return lines
}

// junitLines is a JUnit failure or error of type typ: what it counts and
// its first line, then all of them.
func junitLines(typ, count string, lines []string) *junitMessage {
	return &junitMessage{Message: count + ": " + lines[0], Type: typ, Text: strings.Join(lines, "\n")}
}

// WriteJSON writes the report as one JSON document (schema Schema).
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// ReadJSON reads a report WriteJSON wrote, refusing other schemas and
// reports that contradict themselves (Validate).
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("plan: reading report: %w", err)
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("plan: report schema %q, want %q", r.Schema, Schema)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// WriteTAP writes the report as TAP version 13: one test point per check,
// with a YAML block listing the failures and what could not be read
// (status: error; a check that could not complete is "not ok"), and the
// skip reason in the directive.
func WriteTAP(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "TAP version 13")
	fmt.Fprintf(bw, "1..%d\n", len(r.Checks))
	for i, c := range r.Checks {
		name := tapEscape(c.Category + ": " + c.Name)
		switch c.Status {
		case Fail, Error:
			fmt.Fprintf(bw, "not ok %d - %s\n", i+1, name)
			fmt.Fprintln(bw, "  ---")
			fmt.Fprintf(bw, "  status: %s\n", c.Status)
			fmt.Fprintf(bw, "  category: %s\n", yamlString(c.Category))
			fmt.Fprintf(bw, "  passed: %d\n  failed: %d\n", c.Passed, c.Failed)
			if c.Errors > 0 {
				fmt.Fprintf(bw, "  errors: %d\n", c.Errors)
			}
			for _, list := range []struct {
				key string
				st  Status
				n   int
			}{{"failures", Fail, c.Failed}, {"unreadable", Error, c.Errors}} {
				if list.n == 0 {
					continue
				}
				fmt.Fprintf(bw, "  %s:\n", list.key)
				for _, res := range c.Results {
					if res.Status != list.st {
						continue
					}
					fmt.Fprintf(bw, "    - message: %s\n", yamlString(res.Message))
					if o := res.Object; o != nil {
						if o.NodeGUID != "" {
							fmt.Fprintf(bw, "      node_guid: %s\n", yamlString(o.NodeGUID))
						}
						if o.NodeDesc != "" {
							fmt.Fprintf(bw, "      node_desc: %s\n", yamlString(o.NodeDesc))
						}
						if o.Port != 0 {
							fmt.Fprintf(bw, "      port: %d\n", o.Port)
						}
						if o.LID != 0 {
							fmt.Fprintf(bw, "      lid: %d\n", o.LID)
						}
						if o.Plane != 0 {
							fmt.Fprintf(bw, "      plane: %d\n", o.Plane)
						}
					}
				}
			}
			fmt.Fprintln(bw, "  ...")
		case Skip:
			fmt.Fprintf(bw, "ok %d - %s # SKIP %s\n", i+1, name, tapEscape(skipMessage(c)))
		default:
			fmt.Fprintf(bw, "ok %d - %s\n", i+1, name)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(bw, "Bail out! %s\n", tapEscape(r.Error))
	}
	return bw.Flush()
}

// tapEscape keeps a description on one line and escapes TAP's '#'.
func tapEscape(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "#", `\#`)
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escaping is
// valid there).
func yamlString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     junitTime    `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      junitTime   `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
	SystemErr string      `xml:"system-err,omitempty"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      junitTime     `xml:"time,attr"`
	Error     *junitMessage `xml:"error,omitempty"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

// junitTime is a duration in seconds written in plain decimal notation
// (microseconds), never with an exponent: the JUnit schema's time is an
// xs:decimal, which rejects 5.324e-05.
type junitTime float64

func (t junitTime) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	return xml.Attr{Name: name, Value: strconv.FormatFloat(float64(t), 'f', 6, 64)}, nil
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: a testsuite per category, a
// testcase per check, a failure element whose text lists every failed
// result (and then what could not be read), or for a check that could not
// complete an error element (type "unreadable") listing what it could not
// read.
func WriteJUnit(w io.Writer, r *Report) error {
	out := junitSuites{Name: r.Plan.Name, Time: junitTime(r.Duration)}
	for _, cat := range r.Categories() {
		s := junitSuite{Name: cat, Timestamp: r.Started.Format("2006-01-02T15:04:05")}
		for _, c := range r.Checks {
			if c.Category != cat {
				continue
			}
			tc := junitCase{Name: c.Name, ClassName: r.Plan.Name + "." + cat, Time: junitTime(c.Duration)}
			switch c.Status {
			case Fail:
				lines := append(resultLines(c, Fail, ""), resultLines(c, Error, "could not read: ")...)
				tc.Failure = junitLines("fail", fmt.Sprintf("%d failed", c.Failed), lines)
				s.Failures++
			case Error:
				tc.Error = junitLines("unreadable", fmt.Sprintf("%d could not be read", c.Errors), resultLines(c, Error, ""))
				s.Errors++
			case Skip:
				tc.Skipped = &junitMessage{Message: skipMessage(c)}
				s.Skipped++
			}
			s.Tests++
			s.Time += junitTime(c.Duration)
			s.Cases = append(s.Cases, tc)
		}
		out.Tests += s.Tests
		out.Errors += s.Errors
		out.Failures += s.Failures
		out.Skipped += s.Skipped
		out.Suites = append(out.Suites, s)
	}
	if r.Error != "" {
		out.Tests++
		out.Errors++
		out.Suites = append(out.Suites, junitSuite{Name: "run", Tests: 1, Errors: 1,
			Timestamp: r.Started.Format("2006-01-02T15:04:05"),
			Cases:     []junitCase{{Name: "run", ClassName: r.Plan.Name, Error: &junitMessage{Message: r.Error, Type: "error", Text: r.Error}}}})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Merge combines reports of the same plan run on several hosts into one:
// checks keep their names, their categories prefixed by the report's
// source, so results stay attributable. The source is the host; when two
// reports come from one host (two rails, two runs) it is the host and the
// local CA and port ("h1:mlx5_1/1"), and when even those agree, the
// report's place on the command line ("h1#2"). Reports should be valid
// (ReadJSON validates what it reads); nil reports and checks are skipped.
func Merge(reports ...*Report) *Report {
	m := New("merged")
	reports = slices.DeleteFunc(slices.Clone(reports), func(r *Report) bool { return r == nil })
	if len(reports) == 0 {
		m.Finish()
		return m
	}
	m.Plan = reports[0].Plan
	m.Started = reports[0].Started
	var errs []string
	srcs := mergeSources(reports)
	for i, r := range reports {
		if r.Started.Before(m.Started) {
			m.Started = r.Started
		}
		m.Duration = max(m.Duration, r.Duration)
		src := srcs[i]
		for _, c := range r.Checks {
			if c == nil {
				continue
			}
			cc := *c
			cc.Bare = max(0, c.Passed-countStatus(c.Results, Pass))
			cc.Category = src + "/" + c.Category
			cc.Results = append(make([]Result, 0, len(c.Results)), c.Results...)
			m.Checks = append(m.Checks, &cc)
		}
		if r.Error != "" {
			errs = append(errs, src+": "+r.Error)
		}
	}
	m.Plan.Categories = nil
	m.Error = strings.Join(errs, "; ")
	m.Finish()
	return m
}

// mergeSources names each report for Merge: its host, made unique by the
// local CA and port, then by its position.
func mergeSources(reports []*Report) []string {
	out := make([]string, len(reports))
	count := map[string]int{}
	for i, r := range reports {
		out[i] = r.Fabric.Host
		if out[i] == "" {
			out[i] = fmt.Sprintf("report%d", i+1)
		}
		count[out[i]]++
	}
	for i, r := range reports {
		if count[out[i]] > 1 && r.Fabric.CA != "" {
			out[i] = fmt.Sprintf("%s:%s/%d", out[i], r.Fabric.CA, r.Fabric.Port)
		}
	}
	seen := map[string]int{}
	for i := range out {
		seen[out[i]]++
		if n := seen[out[i]]; n > 1 {
			out[i] = fmt.Sprintf("%s#%d", out[i], n)
		}
	}
	return out
}

func countStatus(rs []Result, s Status) int {
	n := 0
	for _, r := range rs {
		if r.Status == s {
			n++
		}
	}
	return n
}
