package smp_test

import (
	"testing"

	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/smp"
)

var registry = madtest.Registry{Layouts: smp.Layouts, LayoutByID: smp.LayoutByID, LayoutByName: smp.LayoutByName, NewCodec: smp.NewCodec}

// TestEveryAttribute: every attribute of the schema passes the codec checks.
func TestEveryAttribute(t *testing.T) { madtest.EveryAttribute(t, registry) }

// FuzzAttributes: every attribute of the schema survives arbitrary bytes.
func FuzzAttributes(f *testing.F) { madtest.FuzzAttributes(f, registry) }

// BenchmarkCodecs: decode and encode every attribute of the schema.
func BenchmarkCodecs(b *testing.B) { madtest.BenchmarkCodecs(b, registry) }
