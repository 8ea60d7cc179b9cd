module github.com/ibscript/ibscript

go 1.25.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/peterh/liner v1.2.2
	github.com/yuin/gopher-lua v1.1.2
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.36.0
)

require (
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
)
