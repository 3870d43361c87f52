package auth

import (
	"net"
	"net/netip"
	"strings"
)

// ClientIP is the address of the client: the connection's peer, or, when the peer is a trusted proxy, the
// right-most address of X-Forwarded-For that is not itself a trusted proxy. Addresses a client wrote into the
// header itself (left of what the proxies appended) are never believed.
func ClientIP(remoteAddr, xff string, trusted []netip.Prefix) string {
	host := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		host = h
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !isTrusted(peer, trusted) || xff == "" {
		return peer.String()
	}
	hops := strings.Split(xff, ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer.String()
		}
		a = a.Unmap()
		if !isTrusted(a, trusted) {
			return a.String()
		}
		peer = a
	}
	return peer.String()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
