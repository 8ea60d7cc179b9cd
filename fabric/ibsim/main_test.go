package ibsim

import (
	"testing"

	"github.com/ibscript/ibscript/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
