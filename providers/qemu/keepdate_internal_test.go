package qemu

import (
	"strings"
	"testing"
	"time"

	"github.com/boxsnap/boxsnap/providers"
)

// TestRelabelKeepsTheRest: the label rewrite replaces the snapshot's own
// description alone: its domain's description, its name, state and parent
// are as they were, and the new label reads back with its keep date.
func TestRelabelKeepsTheRest(t *testing.T) {
	old := snapLabel{Label: providers.Label{Install: "in", Box: "bx", Snapshot: "sn1"}, Memory: true}
	def, err := snapshotDef(old)
	if err != nil {
		t.Fatal(err)
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(def, "<domainsnapshot>"), "</domainsnapshot>")
	xs := "<domainsnapshot>\n  " + inner + "\n  <state>running</state>\n  <parent><name>sn0</name></parent>\n  <creationTime>1700000000</creationTime>\n" +
		"  <domain type='qemu'><name>boxsnap-bx</name><description>the domain's own &amp; not a label</description></domain>\n</domainsnapshot>"
	until := time.Date(2027, 1, 2, 23, 59, 59, 0, time.UTC)
	lab := old
	lab.KeptUntil = &until
	got, err := relabel(xs, lab)
	if err != nil {
		t.Fatal(err)
	}
	x, err := parseSnapshot(got)
	if err != nil {
		t.Fatal(err)
	}
	back, ok := x.label()
	if !ok || back.KeptUntil == nil || !back.KeptUntil.Equal(until) || back.Snapshot != "sn1" || !back.Memory {
		t.Fatalf("the relabelled snapshot reads back %+v (%v); want sn1 with memory, kept until %v", back, ok, until)
	}
	if x.Name != "sn1" || x.State != "running" || x.Parent.Name != "sn0" || x.CreationTime != 1700000000 {
		t.Fatalf("the relabel changed the rest: %+v", x)
	}
	if !strings.Contains(got, "<description>the domain's own &amp; not a label</description></domain>") {
		t.Fatalf("the relabel changed the domain's description:\n%s", got)
	}
	if _, err := relabel("<domainsnapshot><name>sn1</name></domainsnapshot>", lab); err == nil {
		t.Fatalf("a snapshot XML with no description was relabelled")
	}
}
