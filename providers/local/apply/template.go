package apply

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/boxsnap/boxsnap/providers"
)

// TemplateDir resolves a template folder's name inside the templates folder
// (Config.Templates), refusing in words a full path, "..", a name with a
// slash, or a link whose target is outside the templates folder.
func (b *Writer) TemplateDir(name string) (string, error) {
	if err := providers.CheckFolderName(name); err != nil {
		return "", err
	}
	if b.Templates == "" {
		return "", &providers.RefusedError{Why: "No templates folder is set, so no box can be made from a template folder."}
	}
	base, err := filepath.EvalSymlinks(b.Templates)
	if err != nil {
		return "", &providers.RefusedError{Why: fmt.Sprintf("The templates folder %s cannot be read.", b.Templates)}
	}
	src, err := filepath.EvalSymlinks(filepath.Join(base, name))
	if err != nil {
		return "", &providers.RefusedError{Why: fmt.Sprintf("No template folder named %s in the templates folder.", name)}
	}
	if rel, err := filepath.Rel(base, src); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", &providers.RefusedError{Why: fmt.Sprintf("The template folder %s is a link leading out of the templates folder.", name)}
	}
	return src, nil
}
