// Command apistand serves the OpenAI-compatible stand-in for the demo. It
// prints its base URL (ending in /v1) as the first line on stdout and serves
// until SIGINT or SIGTERM.
//
//	apistand -addr 127.0.0.1:0 -quota 5 -scale 0.0166 -key KEY
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spoolgate/spoolgate/examples/apistand"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	quota := flag.Int("quota", 5, "most requests answered at once; more get 429 (0: no limit)")
	scale := flag.Float64("scale", 1, "multiplies every [[duration]] (0.0166: a minute takes a second)")
	key := flag.String("key", "", "bearer key every request must carry (empty: any)")
	retryAfter := flag.Duration("retry-after", time.Second, "wait a 429 asks for")
	verbose := flag.Bool("v", false, "log each request on stderr")
	flag.Parse()

	log := slog.New(slog.DiscardHandler)
	if *verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", "apistand")
	}
	srv, err := apistand.Start(apistand.Options{
		Addr: *addr, Quota: *quota, Scale: *scale, RequireKey: *key,
		RetryAfter: *retryAfter, Log: log,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "apistand:", err)
		os.Exit(1)
	}
	fmt.Println(srv.URL())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "apistand:", err)
		os.Exit(1)
	}
}
