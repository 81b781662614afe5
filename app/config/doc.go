// Package config is boxsnap's typed configuration: every setting, its
// environment variable, its flag, its default and its validation, in one
// place. Secrets may come from a file (NAME_FILE). It imports nothing of
// boxsnap.
package config
