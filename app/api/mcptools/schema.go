package mcptools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/boxsnap/boxsnap/app/api"
)

// toolSummary is a tool's description over MCP: its summary in
// openapi.json and, for a long tool, its 202 answer's description there,
// which says how to poll it to its end (MCP has no status for an agent to
// read).
func toolSummary(name string) string {
	var doc struct {
		Paths map[string]map[string]struct {
			Summary   string `json:"summary"`
			Responses map[string]struct {
				Description string `json:"description"`
			} `json:"responses"`
		} `json:"paths"`
	}
	_ = json.Unmarshal(api.OpenAPI(), &doc)
	post := doc.Paths["/tools/"+name]["post"]
	if long := post.Responses["202"].Description; long != "" {
		return post.Summary + " " + long
	}
	return post.Summary
}

// paramWords are the descriptions openapi.json gives a tool's parameters
// in its request's schema, by parameter: the words a JSON caller reads.
func paramWords(name string) map[string]string {
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Description string `json:"description"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	_ = json.Unmarshal(api.OpenAPI(), &doc)
	ref := doc.Paths["/tools/"+name]["post"].RequestBody.Content["application/json"].Schema.Ref
	out := map[string]string{}
	for p, v := range doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")].Properties {
		if v.Description != "" {
			out[p] = v.Description
		}
	}
	return out
}

// toolSchema is a JSON schema of a tool's parameters: an object with one
// property per JSON field of its Params, each with its type and the
// description openapi.json gives it, so an agent over MCP reads what one
// over JSON reads.
func toolSchema(t toolDef) map[string]any {
	words := paramWords(t.Name)
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
		prop := map[string]any{"type": typ}
		if w := words[name]; w != "" {
			prop["description"] = w
		}
		props[name] = prop
	}
	required := t.Required
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}
