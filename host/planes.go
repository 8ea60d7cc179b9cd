package host

import (
	"context"

	"github.com/ibscript/ibscript/engine"
)

// DiscoverPlanes is Session().DiscoverPlanes on the host's fabric: every
// plane when the port is a planarized CA's, else Session().Discover.
func (h *Host) DiscoverPlanes(ctx context.Context, opts *engine.DiscoverOptions) (*engine.Discovery, error) {
	return h.sess.DiscoverPlanes(ctx, h.fab, opts)
}
