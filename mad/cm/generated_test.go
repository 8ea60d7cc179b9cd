package cm_test

import (
	"testing"

	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/mad/madtest"
)

var registry = madtest.Registry{Layouts: cm.Layouts, LayoutByID: cm.LayoutByID, LayoutByName: cm.LayoutByName, NewCodec: cm.NewCodec}

// TestEveryAttribute: every CM message of the schema passes the codec
// checks (walking ones, reserved bits ignored, no allocation).
func TestEveryAttribute(t *testing.T) { madtest.EveryAttribute(t, registry) }

// FuzzAttributes: every CM message survives arbitrary bytes.
func FuzzAttributes(f *testing.F) { madtest.FuzzAttributes(f, registry) }

// BenchmarkCodecs: decode and encode every CM message.
func BenchmarkCodecs(b *testing.B) { madtest.BenchmarkCodecs(b, registry) }
