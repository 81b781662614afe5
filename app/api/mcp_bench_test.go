package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolRoundTripMCP is an agent's tool round trip over MCP beside
// the same JSON call, by one caller, in one run: each iteration calls
// box_snapshots on a box with one snapshot both ways, alternately, and the
// medians and their ratio (MCP over JSON) are reported as metrics.
//
//	go test -run '^$' -bench BenchmarkToolRoundTripMCP -benchtime 2000x ./app/api/
func BenchmarkToolRoundTripMCP(b *testing.B) {
	e := setup(b)
	token, agent := e.agent(b, "Fix the sign-in flow")
	e.Box(b, agent, "amber-fox")
	e.call(b, "POST", "/tools/box_snapshot", token, map[string]any{"box": "amber-fox", "name": "before the migration"}).must(b, 200)
	client := mcp.NewClient(&mcp.Implementation{Name: "boxsnap-bench", Version: "1"}, nil)
	ses, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ses.Close()
	args := map[string]any{"box": "amber-fox"}
	body, _ := json.Marshal(args)
	viaJSON := func() {
		req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/tools/box_snapshots", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var v map[string]any
		if res.StatusCode != 200 || json.Unmarshal(raw, &v) != nil {
			b.Fatalf("JSON answered %d %s", res.StatusCode, raw)
		}
	}
	viaMCP := func() {
		res, err := ses.CallTool(context.Background(), &mcp.CallToolParams{Name: "box_snapshots", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("MCP answered %v %+v", err, res)
		}
	}
	// Warm both paths (connections, caches) before timing.
	for range 20 {
		viaJSON()
		viaMCP()
	}
	var js, ms []time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		viaJSON()
		mid := time.Now()
		viaMCP()
		js, ms = append(js, mid.Sub(start)), append(ms, time.Since(mid))
	}
	b.StopTimer()
	mj, mm := median(js), median(ms)
	b.ReportMetric(float64(mj.Microseconds()), "json-µs")
	b.ReportMetric(float64(mm.Microseconds()), "mcp-µs")
	b.ReportMetric(float64(mm)/float64(mj), "mcp/json")
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
