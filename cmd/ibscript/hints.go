package main

import (
	"errors"
	"strings"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/host"
)

// flagHint is what follows the message of an error whose cause a flag (or
// an environment variable ibscript reads) changes: the library's errors
// describe the condition, the command line names its flag
// (bindings.Options.ErrorHint for the errors scripts see).
func flagHint(err error) string {
	switch {
	case errors.Is(err, engine.ErrMADBudget):
		return " (--max-mads)"
	case errors.Is(err, engine.ErrSetRefused):
		return " (--allow-set lets Sets out, audited)"
	case errors.Is(err, host.ErrIbsimNotRunning):
		return " (is ibsim running with that IBSIM_SOCKNAME? --fabric ibsim:SOCK names another socket)"
	case errors.Is(err, bindings.ErrFileNotAllowed):
		return " (a run may use the script's directory and arguments, --arg values and the working directory; --allow-path DIR or --allow-files widen it)"
	}
	return ""
}

// hinted is err's message with its flagHint, added once: an error the
// command line already wrapped with its hint (opening --fabric) keeps one.
func hinted(err error) string {
	msg, h := err.Error(), flagHint(err)
	if strings.HasSuffix(msg, h) {
		return msg
	}
	return msg + h
}
