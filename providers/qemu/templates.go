package qemu

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// A templates folder holds one folder per template, named by it, each
// holding the template's kernel (vmlinuz), initramfs (initrd.img), base
// disk (disk.qcow2) and template.json: its kernel command line, memory,
// cores and the identity reset's version its guest carries.

// Template files in a template's folder.
const (
	templateKernel = "vmlinuz"
	templateInitrd = "initrd.img"
	templateDisk   = "disk.qcow2"
	templateJSON   = "template.json"
)

// templateName is what a template's folder may be named.
var templateName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// templateFile is template.json.
type templateFile struct {
	Cmdline       string `json:"cmdline"`
	MemoryMiB     int    `json:"memoryMiB"`
	CPUs          int    `json:"cpus"`
	IdentityReset int    `json:"identityReset"`
}

// LoadTemplates reads the templates in dir, by name. A folder that is not
// a whole template is refused with what it lacks, so a mistake is seen when
// boxsnap starts, not when a box is asked of it; files are read through no
// link.
func LoadTemplates(dir string) (map[string]Template, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read the QEMU templates folder: %w", err)
	}
	out := map[string]Template{}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if !templateName.MatchString(e.Name()) {
			errs = append(errs, fmt.Errorf("the QEMU template folder %q: a template's name is lower-case letters, digits, '.', '_' and '-'", e.Name()))
			continue
		}
		tpl, err := loadTemplate(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("the QEMU template %s: %w", e.Name(), err))
			continue
		}
		out[e.Name()] = tpl
	}
	return out, errors.Join(errs...)
}

// loadTemplate reads one template's folder.
func loadTemplate(dir string) (Template, error) {
	for _, name := range []string{templateKernel, templateInitrd, templateDisk, templateJSON} {
		st, err := os.Lstat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return Template{}, fmt.Errorf("it has no %s", name)
		}
		if err != nil {
			return Template{}, err
		}
		if !st.Mode().IsRegular() {
			return Template{}, fmt.Errorf("its %s is not a file (a link is not followed)", name)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, templateJSON))
	if err != nil {
		return Template{}, err
	}
	var f templateFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return Template{}, fmt.Errorf("its %s: %w", templateJSON, err)
	}
	if f.MemoryMiB < 0 || f.MemoryMiB > 1<<20 || f.CPUs < 0 || f.CPUs > 256 || f.IdentityReset < 0 {
		return Template{}, fmt.Errorf("its %s asks for %d MiB and %d cores, identity reset %d: out of range", templateJSON, f.MemoryMiB, f.CPUs, f.IdentityReset)
	}
	return Template{Kernel: filepath.Join(dir, templateKernel), Initrd: filepath.Join(dir, templateInitrd), Disk: filepath.Join(dir, templateDisk),
		Cmdline: f.Cmdline, MemoryMiB: f.MemoryMiB, CPUs: f.CPUs, ResetVersion: f.IdentityReset}, nil
}
