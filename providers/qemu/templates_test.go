package qemu_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxsnap/boxsnap/providers/qemu"
)

// TestTemplatesFolder: BOXSNAP_QEMU_TEMPLATES' folder gives one template
// per whole folder, named by it; a folder that lacks a file, or whose file
// is a link, is refused saying so, and nothing is read through a link.
func TestTemplatesFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(tpl, name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, tpl), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, tpl, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tpl := range []string{"debian-12", "no-disk", "linked"} {
		write(tpl, "vmlinuz", "kernel")
		write(tpl, "initrd.img", "initrd")
		write(tpl, "template.json", `{"cmdline": "console=ttyS0", "memoryMiB": 512, "cpus": 2, "identityReset": 1}`)
	}
	write("debian-12", "disk.qcow2", "disk")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "linked", "disk.qcow2")); err != nil {
		t.Fatal(err)
	}
	got, err := qemu.LoadTemplates(dir)
	if err == nil || !strings.Contains(err.Error(), "no-disk: it has no disk.qcow2") || !strings.Contains(err.Error(), "linked: its disk.qcow2 is not a file") {
		t.Errorf("LoadTemplates answered %v, want the two folders that are not whole templates refused with what they lack", err)
	}
	want := qemu.Template{Kernel: filepath.Join(dir, "debian-12", "vmlinuz"), Initrd: filepath.Join(dir, "debian-12", "initrd.img"),
		Disk: filepath.Join(dir, "debian-12", "disk.qcow2"), Cmdline: "console=ttyS0", MemoryMiB: 512, CPUs: 2, ResetVersion: 1}
	if len(got) != 1 || got["debian-12"] != want {
		t.Errorf("LoadTemplates gave %+v, want debian-12 alone: %+v", got, want)
	}
}
