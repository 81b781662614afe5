// Package logging makes boxsnap's slog logger: text on a terminal, JSON
// otherwise, and carries a request's logger (with its request ID) in a
// context. It imports nothing of boxsnap.
package logging

import (
	"context"
	"io"
	"log/slog"
	"os"

	"golang.org/x/term"
)

// New makes a logger writing to w in format ("auto", "text" or "json") at
// level ("debug", "info", "warn", "error").
func New(w io.Writer, format, level string) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if format == "auto" {
		format = "json"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

type ctxKey struct{}

// With returns a context carrying logger.
func With(ctx context.Context, logger *slog.Logger) context.Context {
	return context.WithValue(ctx, ctxKey{}, logger)
}

// From returns the logger ctx carries, or fallback.
func From(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	if l, ok := ctx.Value(ctxKey{}).(*slog.Logger); ok {
		return l
	}
	return fallback
}
