package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/boxsnap/boxsnap/app/api"
)

// openAPIDoc is the part of the OpenAPI file the tests read.
type openAPIDoc struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

// schema is the subset of OpenAPI's schema object the file uses.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	Enum                 []any              `json:"enum"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	Nullable             bool               `json:"nullable"`
}

func readOpenAPI(t *testing.T, e *env) openAPIDoc {
	t.Helper()
	a := e.call(t, "GET", "/openapi.json", "", nil).must(t, 200)
	var doc openAPIDoc
	if err := json.Unmarshal(a.Raw, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi.json is version %q, want 3.x", doc.OpenAPI)
	}
	return doc
}

// TestOpenAPIMatchesRoutes: every route in the router is in the file with
// its method, and every path and method in the file is routed.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	doc := readOpenAPI(t, e)
	routes, ok := api.New(e.APIOptions()).(chi.Routes)
	if !ok {
		t.Fatal("api.New is not a chi router")
	}
	routed := map[string]bool{}
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routed[strings.ToLower(method)+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			documented[method+" "+path] = true
		}
	}
	var missing, extra []string
	for r := range routed {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !routed[d] {
			extra = append(extra, d)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("routes not in openapi.json: %v\npaths in openapi.json not routed: %v", missing, extra)
	}
	if len(routed) < 25 {
		t.Fatalf("only %d routes walked", len(routed))
	}
}

// TestOpenAPIResponsesValidate checks real answers against their schemas.
func TestOpenAPIResponsesValidate(t *testing.T) {
	t.Parallel()
	e := setup(t)
	doc := readOpenAPI(t, e)
	token, agent := e.agent(t, "Check the schemas")
	e.Box(t, agent, "vivid-moss")
	for _, tc := range []struct {
		schema string
		a      answer
	}{
		{"TakeAnswer", e.call(t, "POST", "/tools/box_snapshot", token, map[string]any{"box": "vivid-moss", "name": "one"}).must(t, 200)},
		{"SnapshotsAnswer", e.call(t, "POST", "/tools/box_snapshots", token, map[string]any{}).must(t, 200)},
		{"RestoreAnswer", e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "vivid-moss", "snapshot": "one", "replace": true}).must(t, 200)},
		{"ForkCheckAnswer", e.call(t, "GET", "/boxes/vivid-moss/snapshots/one/fork", token, nil).must(t, 200)},
		{"ForkAnswer", e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "vivid-moss", "snapshot": "one"}).must(t, 200)},
		{"ForkAnswer", e.call(t, "POST", "/tools/box_fork", token, map[string]any{"box": "vivid-moss", "name": "vivid-now"}).must(t, 200)},
		{"OperationAnswer", e.call(t, "POST", "/boxes/vivid-moss/snapshots/one/fork?wait=true", e.owner, map[string]any{"asMachine": true}).must(t, 200)},
		{"ListAnswer", e.call(t, "GET", "/snapshots", e.owner, nil).must(t, 200)},
		{"Snapshot", e.call(t, "GET", "/boxes/vivid-moss/snapshots/one", token, nil).must(t, 200)},
		{"FilesAnswer", e.call(t, "GET", "/boxes/vivid-moss/snapshots/one/files", token, nil).must(t, 200)},
		{"DiffAnswer", e.call(t, "GET", "/boxes/vivid-moss/snapshots/one/diff?limit=5", token, nil).must(t, 200)},
		{"DiffAnswer", e.call(t, "POST", "/tools/box_snapshot_diff", token, map[string]any{"box": "vivid-moss", "snapshot": "one"}).must(t, 200)},
		{"DryRunAnswer", e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "vivid-moss", "snapshot": "one", "dry_run": true}).must(t, 200)},
		{"Lineage", e.call(t, "GET", "/boxes/vivid-moss/snapshots/one/lineage", token, nil).must(t, 200)},
		{"Lineage", e.call(t, "GET", "/boxes/vivid-moss/lineage", token, nil).must(t, 200)},
		{"OperationAnswer", e.call(t, "POST", "/boxes/vivid-moss/snapshots?wait=true", token, map[string]any{"name": "two"}).must(t, 200)},
		{"DeleteDryAnswer", e.call(t, "POST", "/tools/box_snapshot_delete", token, map[string]any{"box": "vivid-moss", "snapshot": "two", "dry_run": true}).must(t, 200)},
		{"DeleteDryAnswer", e.call(t, "DELETE", "/boxes/vivid-moss/snapshots/two?dry_run=true", token, nil).must(t, 200)},
		{"DeleteAnswer", e.call(t, "POST", "/tools/box_snapshot_delete", token, map[string]any{"box": "vivid-moss", "snapshot": "two"}).must(t, 200)},
		{"BoxesAnswer", e.call(t, "GET", "/boxes", e.owner, nil).must(t, 200)},
		{"Box", e.call(t, "GET", "/boxes/vivid-moss", token, nil).must(t, 200)},
		{"LogAnswer", e.call(t, "GET", "/boxes/vivid-moss/log", e.owner, nil).must(t, 200)},
		{"ThreadsAnswer", e.call(t, "GET", "/threads", e.owner, nil).must(t, 200)},
		{"ThreadAnswer", e.call(t, "POST", "/threads", e.owner, map[string]any{"title": "Another"}).must(t, 201)},
		{"Settings", e.call(t, "GET", "/settings", e.owner, nil).must(t, 200)},
		{"ResetDryAnswer", e.call(t, "POST", "/tools/box_reset", token, map[string]any{"box": "vivid-moss", "keep_logins": true, "dry_run": true}).must(t, 200)},
		{"ResetDryAnswer", e.call(t, "POST", "/boxes/vivid-moss/reset?dry_run=true", token, map[string]any{"keepLogins": true}).must(t, 200)},
		{"ResetAnswer", e.call(t, "POST", "/tools/box_reset", token, map[string]any{"box": "vivid-moss", "keep_logins": true}).must(t, 200)},
		{"DryRunAnswer", e.call(t, "POST", "/tools/box_undo", token, map[string]any{"box": "vivid-moss", "dry_run": true}).must(t, 200)},
		{"DryRunAnswer", e.call(t, "POST", "/boxes/vivid-moss/undo?dry_run=true", token, nil).must(t, 200)},
		{"RestoreAnswer", e.call(t, "POST", "/tools/box_undo", token, map[string]any{"box": "vivid-moss"}).must(t, 200)},
		{"ReleaseDryAnswer", e.call(t, "POST", "/boxes/vivid-now/release?dry_run=true", token, nil).must(t, 200)},
		{"OperationAnswer", e.call(t, "POST", "/boxes/vivid-now/release?wait=true", token, nil).must(t, 200)},
		{"TrashAnswer", e.call(t, "POST", "/tools/box_trash", token, map[string]any{}).must(t, 200)},
		{"TrashAnswer", e.call(t, "GET", "/trash", e.owner, nil).must(t, 200)},
		{"OperationAnswer", e.call(t, "POST", "/tools/box_trash_restore", token, map[string]any{"box": "vivid-now"}).must(t, 200)},
		{"Error", e.call(t, "POST", "/tools/box_restore", token, map[string]any{"box": "vivid-moss"}).must(t, 400)},
		{"Error", e.call(t, "GET", "/boxes", "", nil).must(t, 401)},
	} {
		var v any
		if err := json.Unmarshal(tc.a.Raw, &v); err != nil {
			t.Fatal(err)
		}
		if err := validate(doc, doc.Components.Schemas[tc.schema], v, tc.schema); err != nil {
			t.Errorf("%s: %v\n%s", tc.schema, err, tc.a.Raw)
		}
	}
	// The validator itself refuses what does not fit.
	if validate(doc, doc.Components.Schemas["TakeAnswer"], map[string]any{"message": 3}, "TakeAnswer") == nil {
		t.Fatal("the validator accepts a TakeAnswer with no snapshot and a number for its message")
	}
}

var refRE = regexp.MustCompile(`^#/components/schemas/(\w+)$`)

// validate checks v against s: types, required properties, items, enums,
// and closed objects.
func validate(doc openAPIDoc, s *schema, v any, at string) error {
	if s == nil {
		return fmt.Errorf("%s: no schema", at)
	}
	if s.Ref != "" {
		m := refRE.FindStringSubmatch(s.Ref)
		if m == nil {
			return fmt.Errorf("%s: bad $ref %s", at, s.Ref)
		}
		return validate(doc, doc.Components.Schemas[m[1]], v, at)
	}
	if v == nil {
		if s.Nullable {
			return nil
		}
		return fmt.Errorf("%s: null", at)
	}
	switch s.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an object", at, v)
		}
		for _, r := range s.Required {
			if _, ok := obj[r]; !ok {
				return fmt.Errorf("%s: %s is required", at, r)
			}
		}
		for k, x := range obj {
			if p, ok := s.Properties[k]; ok {
				if err := validate(doc, p, x, at+"."+k); err != nil {
					return err
				}
			} else if string(s.AdditionalProperties) == "false" {
				return fmt.Errorf("%s: %s is not in the schema", at, k)
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an array", at, v)
		}
		for i, x := range arr {
			if err := validate(doc, s.Items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %T, want a string", at, v)
		}
	case "integer":
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return fmt.Errorf("%s: %v, want an integer", at, v)
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return fmt.Errorf("%s: %T, want a number", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %T, want a boolean", at, v)
		}
	}
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			if e == v {
				return nil
			}
		}
		return fmt.Errorf("%s: %v is not one of %v", at, v, s.Enum)
	}
	return nil
}

// TestOpenAPIToolAnswersSayTheirRequests: every answer a tool gives, its
// errors too, declares the "requests" an agent's tool call may carry
// (toolGate), so an agent reading the file knows the field.
func TestOpenAPIToolAnswersSayTheirRequests(t *testing.T) {
	t.Parallel()
	e := setup(t)
	doc := readOpenAPI(t, e)
	schemaRef := regexp.MustCompile(`#/components/schemas/(\w+)`)
	seen := 0
	for path, methods := range doc.Paths {
		if !strings.HasPrefix(path, "/tools/") {
			continue
		}
		for method, raw := range methods {
			var op struct {
				Responses json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil || op.Responses == nil {
				continue
			}
			names := map[string]bool{}
			for _, m := range schemaRef.FindAllStringSubmatch(string(op.Responses), -1) {
				names[m[1]] = true
			}
			if strings.Contains(string(op.Responses), "#/components/responses/Error") {
				names["Error"] = true
			}
			for n := range names {
				seen++
				s := doc.Components.Schemas[n]
				if s == nil || s.Properties["requests"] == nil || s.Properties["requests"].Ref != "#/components/schemas/RequestNews" {
					t.Errorf("%s %s answers %s, which does not declare its requests", method, path, n)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no tool's answers found in openapi.json")
	}
}
