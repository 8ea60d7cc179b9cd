module github.com/ibscript/ibscript

go 1.25.0

require (
	github.com/coreos/go-systemd/v22 v22.6.0
	github.com/google/go-cmp v0.7.0
	github.com/peterh/liner v1.2.2
	github.com/prometheus/client_golang v1.23.2
	github.com/prometheus/client_model v0.6.2
	github.com/prometheus/common v0.66.1
	github.com/prometheus/exporter-toolkit v0.14.1
	github.com/yuin/gopher-lua v1.1.2
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v2 v2.4.2
	golang.org/x/crypto v0.41.0
	golang.org/x/sys v0.36.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/jpillora/backoff v1.0.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
	github.com/mdlayher/socket v0.4.1 // indirect
	github.com/mdlayher/vsock v1.2.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/mwitkow/go-conntrack v0.0.0-20190716064945-2f068394615f // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	golang.org/x/net v0.43.0 // indirect
	golang.org/x/oauth2 v0.30.0 // indirect
	golang.org/x/sync v0.16.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
)
