package mcptools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/boxsnap/boxsnap/app/api"
)

// toolSummary is a tool's summary in openapi.json.
func toolSummary(name string) string {
	var doc struct {
		Paths map[string]map[string]struct {
			Summary string `json:"summary"`
		} `json:"paths"`
	}
	_ = json.Unmarshal(api.OpenAPI(), &doc)
	return doc.Paths["/tools/"+name]["post"].Summary
}

// toolSchema is a JSON schema of a tool's parameters: an object with one
// property per JSON field of its Params.
func toolSchema(t toolDef) map[string]any {
	props := map[string]any{}
	rt := reflect.TypeOf(t.Params)
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var typ string
		switch ft.Kind() {
		case reflect.String:
			typ = "string"
		case reflect.Bool:
			typ = "boolean"
		case reflect.Int, reflect.Int64:
			typ = "integer"
		default:
			panic(fmt.Sprintf("tool %s: parameter %s of kind %s has no schema", t.Name, name, ft.Kind()))
		}
		props[name] = map[string]any{"type": typ}
	}
	required := t.Required
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}
