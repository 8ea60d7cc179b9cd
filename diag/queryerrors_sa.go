package diag

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
)

// ibqueryerrors' steps before it reads a counter, shared by the command
// line and Lua: its -s/-c list, its threshold file, and its PathRecord
// query for the SLs (path_record_query).

// halfWorldPRTimeout is ibqueryerrors' DEFAULT_HALF_WORLD_PR_TIMEOUT:
// the timeout of its PathRecord query, whatever -t says.
const halfWorldPRTimeout = 3 * time.Second

// PathRecordsError is ibqueryerrors' "Query SA failed": its PathRecord
// query for the SLs had no answer, so it reads nothing and ends, status 0.
type PathRecordsError struct{ Err error }

func (e *PathRecordsError) Error() string {
	return "Query SA failed; sa call path_query failed: " + e.Err.Error()
}

func (e *PathRecordsError) Unwrap() error { return e.Err }

// pathRecordSLs is ibqueryerrors' path_record_query: one PathRecord
// GetTable from the local port's GID (to path's port when given),
// reversible, one path each, one try of 3 s whatever -t says (it sets
// ibd_timeout to DEFAULT_HALF_WORLD_PR_TIMEOUT and sa_query sends once).
// The SLs themselves are not used: ibscript's PMA queries go on SL 0.
func (e *Env) pathRecordSLs(ctx context.Context, path []uint8) error {
	s := e.Session
	port := s.Port()
	var dguid uint64
	if path != nil {
		ni, err := s.NodeInfo(ctx, engine.Target{Kind: engine.ByDR, Path: path})
		if err != nil {
			return nil // ibqueryerrors fails on its own NodeInfo next
		}
		dguid = ni.PortGUID
	}
	mask, tmpl := slPathTemplate(port.GIDPrefix, port.PortGUID, dguid, path != nil)
	co := []engine.CallOption{engine.Timeout(halfWorldPRTimeout), engine.Retries(0)}
	if _, err := s.SAGetTable(ctx, sa.PathRecord(), mask, tmpl, co...); err != nil && !errors.Is(err, engine.ErrTruncated) {
		return &PathRecordsError{err}
	}
	return nil
}

// slPathTemplate is path_record_query's PathRecord template and
// component mask: from the local port's GID (prefix, guid), reversible,
// one path, to dguid's GID when toD.
func slPathTemplate(prefix, guid, dguid uint64, toD bool) (uint64, []byte) {
	t := sa.NewPathRecordTemplate().SetSGID(mad.NewGID(prefix, guid)).SetReversible(true).SetNumbPath(1)
	if toD {
		t.SetDGID(mad.NewGID(prefix, dguid))
	}
	return t.ComponentMask(), t.Bytes()
}

// CommonSuppressed is the counter ibqueryerrors' -c suppresses.
const CommonSuppressed = "PortRcvSwitchRelayErrors"

// SuppressNames reads one -s value (a comma-separated list of
// PortCounters names) as ibqueryerrors does: the names it knows, and
// apart those it does not (ibqueryerrors ignores them and goes on).
func SuppressNames(list string) (names, unknown []string) {
	known := perf.LayoutByID(perf.AttrPortCounters)
	for _, name := range strings.Split(list, ",") {
		if _, ok := known.Field(name); !ok {
			unknown = append(unknown, name)
			continue
		}
		names = append(names, name)
	}
	return names, unknown
}

// PortCountersNames lists PortCounters' counters, for an error naming
// what -s takes.
func PortCountersNames() string {
	var names []string
	for _, f := range perf.LayoutByID(perf.AttrPortCounters).Fields {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// DefaultThresholdFile is where ibqueryerrors reads its thresholds.
const DefaultThresholdFile = "/etc/infiniband-diags/error_thresholds"

// ThresholdFileError is a named threshold file that could not be opened.
type ThresholdFileError struct{ Err error }

func (e *ThresholdFileError) Error() string { return e.Err.Error() }
func (e *ThresholdFileError) Unwrap() error { return e.Err }

// LoadThresholds reads the threshold file as ibqueryerrors does: file
// when explicit (--threshold-file), else DefaultThresholdFile, through
// open; a default file that cannot be opened is missing (ibqueryerrors
// goes on, its summary saying "(null)"), a named one a
// *ThresholdFileError.
func LoadThresholds(open func(string) (io.ReadCloser, error), file string, explicit bool) (th Thresholds, missing bool, err error) {
	if !explicit {
		file = DefaultThresholdFile
	}
	f, err := open(file)
	switch {
	case err != nil && explicit:
		return nil, false, &ThresholdFileError{err}
	case err != nil:
		return nil, true, nil
	}
	defer f.Close()
	th, err = ReadThresholds(f, file)
	return th, false, err
}
