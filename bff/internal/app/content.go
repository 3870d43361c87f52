package app

import (
	"context"
	"time"

	contentapi "github.com/exhub/exhub/bff/internal/api/content"
)

// seedContent writes the demo events, banners and announcements on the first start in demo mode (only while the
// store holds no content at all, so anything the operator published or deleted stays as it is).
func (b *BFF) seedContent(ctx context.Context) error {
	if b.cfg.Mode != "demo" {
		return nil
	}
	seeded, err := contentapi.SeedDemo(ctx, b.store, time.Now())
	if err != nil {
		// The BFF serves without demo content rather than not at all.
		b.log.Warn("demo content not seeded", "err", err)
		return nil
	}
	if seeded {
		b.log.Info("demo content seeded (events, banners, announcements in en and ja)")
	}
	return nil
}
