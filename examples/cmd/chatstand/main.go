// Command chatstand runs the chat-page stand-in for the demo: it prints its
// URL on the first line of stdout and serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/spoolgate/spoolgate/examples/chatstand"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	scale := flag.Float64("scale", 1, "multiply every answer duration by this (0.0166: a 31 s answer takes 0.5 s)")
	printURL := flag.Bool("print-url", false, "print the URL on the first line of stdout")
	instructions := flag.String("instructions", "", "pre-fill the page's default instructions field")
	input := flag.String("input", "textarea", "the message field: textarea, input, contenteditable, prosemirror, lexical or quill")
	shadow := flag.Bool("shadow", false, "put the chat inside a web component's open shadow root")
	renderer := flag.String("renderer", "", "Markdown answers over SSE in conversations (/c/ID), rendered by: plain, markdown-it, marked or react-markdown (empty: the plain-text page); the page's ?renderer= overrides it")
	full := flag.Bool("stream-full", false, "each SSE event carries the whole answer so far, not a delta (?stream=full)")
	raw := flag.Bool("raw", false, "show the Markdown source while it streams, render it at the end (?raw=1)")
	random := flag.Bool("random-classes", false, "rename every class of the page at random on each load (?classes=random)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := chatstand.Start(chatstand.Options{Addr: *addr, Scale: *scale, Instructions: *instructions, Input: *input, Shadow: *shadow,
		Renderer: *renderer, StreamFull: *full, RawWhileStreaming: *raw, RandomClasses: *random})
	if err != nil {
		log.Fatal(err)
	}
	if *printURL {
		fmt.Println(s.URL())
	} else {
		log.Printf("chatstand: serving %s (sign in: %slogin?user=demo)", s.URL(), s.URL())
	}
	<-ctx.Done()
	if err := s.Close(); err != nil {
		log.Printf("chatstand: close: %v", err)
	}
}
