package apimodel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
)

// An images endpoint's picture url is the vendor's word, and the vendor's
// answer is as trustworthy as whatever proxy or look-alike server sits at
// the base URL: fetched blindly from the daemon's host it reads the
// intranet (issue 49). So a picture is fetched only from the API's own
// host or a host the model's imageHosts names, over no redirect, and
// never from a loopback, private, link-local or otherwise internal
// address unless the base URL is itself one (a local server). The address
// is checked when the connection is made, after the name was resolved,
// so a name that resolves to an internal address is refused too.

// ErrPictureHost is a picture url the rules above refuse.
var ErrPictureHost = errors.New("picture url refused")

// pictureHostOK checks u's host against the model's base URL and
// imageHosts.
func (m *model) pictureHostOK(u *url.URL) error {
	base, err := url.Parse(m.cfg.BaseURL)
	if err != nil {
		return fmt.Errorf("%w: the base URL does not parse", ErrPictureHost)
	}
	h := strings.ToLower(u.Hostname())
	if h == strings.ToLower(base.Hostname()) || slices.ContainsFunc(m.cfg.ImageHosts, func(a string) bool { return strings.EqualFold(a, h) }) {
		return nil
	}
	return fmt.Errorf("%w: host %s is neither the API's (%s) nor one of models[%s].imageHosts", ErrPictureHost, h, base.Hostname(), m.cfg.Name)
}

// baseInternal reports whether the model's base URL is itself internal
// (loopback, private...): then its pictures may be too.
func (m *model) baseInternal(ctx context.Context) bool {
	base, err := url.Parse(m.cfg.BaseURL)
	if err != nil {
		return false
	}
	h := base.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return internalAddr(a)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	return err == nil && slices.ContainsFunc(addrs, internalAddr)
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// internalAddr reports an address no vendor's storage lives at.
func internalAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() ||
		a.IsMulticast() || a.IsUnspecified() || cgnat.Contains(a) || a == netip.MustParseAddr("255.255.255.255")
}

type internalOKKey struct{}

// pictureClient fetches pictures: no redirect, no kept connection (one
// made for a local model is never reused for another's picture), and a
// dial that refuses an internal address unless the request's context
// allows it (withInternalOK).
func pictureClient(proxy func(*http.Request) (*url.URL, error)) *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second}
	t := &http.Transport{
		Proxy:             proxy,
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dd := *d
			ok, _ := ctx.Value(internalOKKey{}).(bool)
			dd.Control = func(_, address string, _ syscall.RawConn) error {
				ap, err := netip.ParseAddrPort(address)
				if err != nil {
					return fmt.Errorf("%w: cannot read the address %s", ErrPictureHost, address)
				}
				if !ok && internalAddr(ap.Addr()) {
					return fmt.Errorf("%w: %s is an internal address and the API's base URL is not", ErrPictureHost, ap.Addr())
				}
				return nil
			}
			return dd.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: time.Minute,
	}
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
