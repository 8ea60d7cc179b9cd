package perf_test

import (
	"testing"

	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/perf"
)

var registry = madtest.Registry{Layouts: perf.Layouts, LayoutByID: perf.LayoutByID, LayoutByName: perf.LayoutByName,
	NewCodec: perf.NewCodec, CodecOf: perf.CodecOf}

// TestEveryAttribute: every attribute of the schema passes the codec checks.
func TestEveryAttribute(t *testing.T) { madtest.EveryAttribute(t, registry) }

// FuzzAttributes: every attribute of the schema survives arbitrary bytes.
func FuzzAttributes(f *testing.F) { madtest.FuzzAttributes(f, registry) }

// BenchmarkCodecs: decode and encode every attribute of the schema.
func BenchmarkCodecs(b *testing.B) { madtest.BenchmarkCodecs(b, registry) }
