package apimodel

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/spoolgate/spoolgate/spool/config"
)

func TestInternalAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.9", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"fc00::5", true}, {"100.64.0.1", true}, {"0.0.0.0", true},
		{"::ffff:127.0.0.1", true}, {"224.0.0.1", true},
		{"93.184.216.34", false}, {"2606:2800:220:1::1", false}, {"8.8.8.8", false},
	}
	for _, tt := range tests {
		if got := internalAddr(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("internalAddr(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}

// Issue 49: an images endpoint's picture url is fetched only from the
// API's host or a host of imageHosts, over no redirect, and from an
// internal address only when the base URL is one.
func TestExecutor_Download(t *testing.T) {
	pic := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/p.png", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\npicture"))
	}))
	defer pic.Close()
	port := pic.URL[strings.LastIndex(pic.URL, ":"):]
	tests := []struct {
		name, base, url string
		hosts           []string
		err             string // "" for success
	}{
		{"the API's own host (loopback, as its base)", "http://127.0.0.1:9/v1", pic.URL + "/p.png", nil, ""},
		{"another host", "http://127.0.0.1:9/v1", "http://localhost" + port + "/p.png", nil, "neither the API's"},
		{"a host of imageHosts", "http://127.0.0.1:9/v1", "http://localhost" + port + "/p.png", []string{"localhost"}, ""},
		{"internal while the base is not", "http://api.vendor.invalid/v1", pic.URL + "/p.png", []string{"127.0.0.1"}, "internal address"},
		{"a redirect", "http://127.0.0.1:9/v1", pic.URL + "/moved", nil, "HTTP 302"},
		{"not http", "http://127.0.0.1:9/v1", "file:///etc/passwd", nil, "not an http(s) address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &config.Config{Models: []config.ModelConfig{{Name: "painter", Kind: "api", BaseURL: tt.base, ImageHosts: tt.hosts}}}
			e, err := New(cfg, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			data, err := e.download(context.Background(), e.models["painter"], tt.url, 1<<20)
			switch {
			case tt.err == "" && (err != nil || !strings.HasSuffix(string(data), "picture")):
				t.Errorf("got %q, %v; want the picture", data, err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("got %q, %v; want an error with %q", data, err, tt.err)
			case tt.err != "" && tt.err != "HTTP 302" && !errors.Is(err, ErrPictureHost):
				t.Errorf("error %v is not ErrPictureHost", err)
			}
		})
	}
}
