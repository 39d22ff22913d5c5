package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestConsoleConfig_TrustedProxyPrefixes(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, wantErr string
	}{
		{name: "none", in: "", want: "[]"},
		{name: "CIDRs and addresses", in: "[127.0.0.1/32, 10.1.2.3/8, '::1', 192.168.0.7]", want: "[127.0.0.1/32 10.0.0.0/8 ::1/128 192.168.0.7/32]"},
		{name: "a host name", in: "[proxy.local]", wantErr: `console.trustedProxies[0]: "proxy.local" is not a CIDR or an address (e.g. 127.0.0.1/32, ::1, 10.0.0.0/8)`},
		{name: "a bad mask", in: "[127.0.0.1/32, 10.0.0.0/33]", wantErr: `console.trustedProxies[1]: "10.0.0.0/33" is not a CIDR`},
		{name: "not a list", in: "127.0.0.1/32", wantErr: "console.trustedProxies: line 1: want a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "console: {}\n"
			if tc.in != "" {
				in = "console: {trustedProxies: " + tc.in + "}\n"
			}
			c, err := ParseConfig([]byte(in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(c.Console.TrustedProxyPrefixes()); got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}
