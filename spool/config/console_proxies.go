package config

import (
	"fmt"
	"net/netip"
)

// parseProxy reads one console.trustedProxies entry: a CIDR (its host
// bits dropped) or a bare address, which is a prefix of that one address.
func parseProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR or an address (e.g. 127.0.0.1/32, ::1, 10.0.0.0/8)", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// checkTrustedProxies refuses an entry that is not a CIDR or an address.
func (cc *ConsoleConfig) checkTrustedProxies() error {
	for i, s := range cc.TrustedProxies {
		if _, err := parseProxy(s); err != nil {
			return &ConfigError{Key: fmt.Sprintf("console.trustedProxies[%d]", i), Msg: err.Error()}
		}
	}
	return nil
}

// TrustedProxyPrefixes are console.trustedProxies, read (the entries a
// checked config refuses are left out).
func (c ConsoleConfig) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		if p, err := parseProxy(s); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}
