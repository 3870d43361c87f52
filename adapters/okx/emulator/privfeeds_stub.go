package emulator

import "context"

func (c *wsConn) orderFeed(a map[string]string, acct string) feed    { return func(ctx context.Context) { <-ctx.Done() } }
func (c *wsConn) positionFeed(a map[string]string, acct string) feed { return func(ctx context.Context) { <-ctx.Done() } }
func (c *wsConn) accountFeed(a map[string]string, acct string) feed  { return func(ctx context.Context) { <-ctx.Done() } }
