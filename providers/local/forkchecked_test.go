package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxsnap/boxsnap/providers"
	"github.com/boxsnap/boxsnap/providers/local/overlay"
)

// TestASharedTreeNeverLinksContentChangedSinceItsTake: a shared tree links
// without reading again only a content object unmoved since its take
// wrote it; one written in place after the take (the same size, other
// bytes) is read, found damaged and never linked, and no fork reads its
// bytes, while the tree's other files are still the store's objects.
func TestASharedTreeNeverLinksContentChangedSinceItsTake(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFailInCI(t, "a shared tree links the store's content only where boxsnap runs as root")
	}
	e := shareEnv(t, 64<<20)
	e.write(t, "etc/motd", "welcome")
	e.write(t, "etc/hosts", "127.0.0.1 localhost")
	_, ref := e.take(t)
	spoilt := "WELCOME"
	obj := objectOf(e, "welcome")
	if err := os.WriteFile(obj, []byte(spoilt), 0o444); err != nil {
		t.Fatal(err)
	}
	g, err := e.b.ForkSnapshot(e.ctx, ref, providers.BoxIdentity{ID: "bxforka", Kind: "linux"}, nil)
	tree := (&overlay.Lowers{Store: e.b.Store}).Tree(ref.ID)
	if _, serr := os.Lstat(filepath.Join(tree, "etc/motd")); serr == nil && inode(t, filepath.Join(tree, "etc/motd")) == inode(t, obj) {
		t.Fatal("the shared tree links the object written in place since the take, want it never linked")
	}
	if err != nil {
		return // refused for the damage: nothing of the fork reads it
	}
	if got, rerr := os.ReadFile(filepath.Join(e.b.BoxDir(g), "etc/motd")); rerr == nil && string(got) == spoilt {
		t.Fatalf("the fork reads %q, the bytes written over the store's object since the take", got)
	}
	if inode(t, filepath.Join(tree, "etc/hosts")) != inode(t, objectOf(e, "127.0.0.1 localhost")) {
		t.Fatal("the tree's unspoilt file is not the store's object, want it linked")
	}
}
