package main

import (
	"errors"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
)

// flagHint is what follows the message of an error whose cause a flag
// changes: the library's errors describe the condition, the command line
// names its flag (bindings.Options.ErrorHint for the errors scripts see).
func flagHint(err error) string {
	switch {
	case errors.Is(err, engine.ErrMADBudget):
		return " (--max-mads)"
	case errors.Is(err, engine.ErrSetRefused):
		return " (--allow-set lets Sets out, audited)"
	case errors.Is(err, bindings.ErrFileNotAllowed):
		return " (a run may use the script's directory and arguments, --arg values and the working directory; --allow-path DIR or --allow-files widen it)"
	}
	return ""
}
