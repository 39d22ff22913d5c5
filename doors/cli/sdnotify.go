package cli

import (
	"net"
	"os"
	"strings"
)

// notifyReady tells a service manager that the daemon has started, by the
// sd_notify protocol: "READY=1" in a datagram to $NOTIFY_SOCKET (systemd's
// Type=notify; tests use it to know the daemon runs). Without the variable
// it does nothing; a failure is reported to the caller, never fatal.
func notifyReady() error { return sdNotify("READY=1") }

// notifyStopping says the daemon is shutting down.
func notifyStopping() error { return sdNotify("STOPPING=1") }

func sdNotify(state string) error {
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return nil
	}
	if strings.HasPrefix(path, "@") {
		path = "\x00" + path[1:] // an abstract socket
	}
	c, err := net.Dial("unixgram", path)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}
