package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"

	"github.com/spoolgate/spoolgate/browser"
	"github.com/spoolgate/spoolgate/spool/config"
)

// errNeedChromium means Chromium is missing and we may not install it; the
// message to the user has been printed.
var errNeedChromium = errors.New("chromium is not installed")

// ensureChromium finds the browser the web lane would run; when there is
// none it installs Debian's chromium package through apt if we are root,
// else it prints the one command to run.
func ensureChromium(stdout, stderr io.Writer) (string, error) {
	if p, err := browser.FindBrowser(&config.Config{}); err == nil {
		return p, nil
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		fmt.Fprintln(stderr, "make demo needs Chromium for the web lane, and it is not installed. Install it with:")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "    sudo apt-get update && sudo apt-get install -y chromium")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "then run make demo again.")
		return "", errNeedChromium
	}
	fmt.Fprintln(stdout, "demo: Chromium is missing; installing it: apt-get update && apt-get install -y chromium")
	for _, args := range [][]string{{"update"}, {"install", "-y", "chromium"}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("apt-get %v: %w", args, err)
		}
	}
	p, err := browser.FindBrowser(&config.Config{})
	if err != nil {
		return "", fmt.Errorf("chromium installed but still not found: %w", err)
	}
	return p, nil
}
