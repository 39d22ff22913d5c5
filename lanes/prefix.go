package lanes

import (
	"context"
	"log/slog"
)

// prefixHandler puts a fixed prefix before each message.
type prefixHandler struct {
	h      slog.Handler
	prefix string
}

func (p prefixHandler) Enabled(ctx context.Context, l slog.Level) bool { return p.h.Enabled(ctx, l) }

func (p prefixHandler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, p.prefix+r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool { nr.AddAttrs(a); return true })
	return p.h.Handle(ctx, nr)
}

func (p prefixHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return prefixHandler{p.h.WithAttrs(as), p.prefix}
}

func (p prefixHandler) WithGroup(n string) slog.Handler {
	return prefixHandler{p.h.WithGroup(n), p.prefix}
}
