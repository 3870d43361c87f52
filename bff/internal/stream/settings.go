package stream

// ConfigFrom maps the stream section of the BFF configuration (Settings) to the gateway's Config. The section's lease_ttl and valkey_prefix go to ValkeyOptions (see ValkeyOptionsFrom).
func ConfigFrom(s Settings) Config {
	c := Config{
		MaxSubscriptions:   s.MaxSubscriptions,
		MaxMessageBytes:    int64(s.MaxMessageBytes),
		MaxConnections:     s.MaxConnections,
		MaxDepth:           s.MaxDepth,
		UpstreamDepth:      s.UpstreamDepth,
		UpstreamLinger:     s.UpstreamLinger.D(),
		MaxCoalescedTrades: s.MaxCoalescedTrades,
		MaxPendingControl:  s.MaxPendingControl,
		MaxFrameBytes:      s.MaxFrameBytes,
		PingInterval:       s.PingInterval.D(),
		PongTimeout:        s.PongTimeout.D(),
		WriteTimeout:       s.WriteTimeout.D(),
		InstrumentsTTL:     s.InstrumentsTTL.D(),
		OriginPatterns:     s.Origins(),
		SessionRecheck:     s.SessionRecheck.D(),
		MaxPrivatePending:  s.MaxPrivatePending,
	}
	if c.UpstreamLinger == 0 {
		c.UpstreamLinger = -1 // the config's 0s means no wait; Config's zero means the default
	}
	return c
}

// ValkeyOptionsFrom returns the ValkeyBroker options of the stream section (lease TTL, key prefix); the caller
// adds the client and the logger.
func ValkeyOptionsFrom(s Settings) ValkeyOptions {
	return ValkeyOptions{LeaseTTL: s.LeaseTTL.D(), Prefix: s.ValkeyPrefix}
}
