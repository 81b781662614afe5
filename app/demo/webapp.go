package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

var page = template.Must(template.New("app").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in service</title>
<style>body{font:16px system-ui,sans-serif;margin:0;background:#0f2a44;color:#e8f0f8}
header{background:#1d4f7a;padding:18px 28px;font-size:22px}main{padding:28px}
pre{background:#0a1d30;padding:16px;border-radius:8px;white-space:pre-wrap}.n{font-size:48px;color:#ffd36b}</style>
</head><body><header>Sign-in service · running in this box</header><main>
<p>Requests served since the box started: <span class="n">{{.Visits}}</span></p>
<p>notes.txt, as it is on the box's disk now:</p><pre>{{.Notes}}</pre>
<p>{{.Now}}</p></main></body></html>`))

// RunWebApp is `boxsnap demo-app`: the demo box's own process, a small web
// app that shows the box's notes.txt and counts its requests in visits.log,
// so its disk changes as it runs and its screen can be pictured.
func RunWebApp(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo-app", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 8090, "port on 127.0.0.1")
	if err := fs.Parse(args); err != nil {
		return err
	}
	visits := 0
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		visits++
		f, err := os.OpenFile("visits.log", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), r.URL.Path)
			f.Close()
		}
		notes, _ := os.ReadFile("notes.txt")
		_ = page.Execute(w, map[string]any{"Visits": visits, "Notes": strings.TrimSpace(string(notes)),
			"Now": time.Now().UTC().Format("Mon 2 Jan 15:04:05 UTC")})
	})
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
