package testkit

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreeAddr is an address on 127.0.0.1 that nothing listens on, for a
// server a test starts on a port it must know before (a daemon's config,
// kept across a restart). The port comes from below the kernel's
// ephemeral range: a port that ":0" handed out and the test closed could
// be handed to any other test's connection or listener before the daemon
// binds it (a door test met another test's server there, "404 Not Found",
// its daemon logging "address already in use"); ports below the range are
// never handed out, so only another FreeAddr could take it, at a random
// place among thousands.
func FreeAddr(t testing.TB) string {
	t.Helper()
	lo, hi := belowEphemeral()
	start := lo + rand.IntN(hi-lo)
	for i := range hi - lo {
		p := lo + (start-lo+i)%(hi-lo)
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // taken
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	t.Fatalf("no free port on 127.0.0.1 in %d-%d", lo, hi)
	return ""
}

// belowEphemeral is a range of ports under the kernel's ephemeral ones
// (Linux: net.ipv4.ip_local_port_range, 32768 by default; Windows and
// macOS start theirs at 49152).
func belowEphemeral() (lo, hi int) {
	lo, hi = 20000, 32000
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var first, last int
		if _, err := fmt.Sscan(strings.TrimSpace(string(data)), &first, &last); err == nil && first > 11000 {
			hi = min(hi, first-1)
			lo = min(lo, hi-1000)
		}
	}
	return lo, hi
}
