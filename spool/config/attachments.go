package config

import (
	"fmt"
	"path/filepath"
	"slices"
)

// AttachmentsConfig is `attachments:`: where a task's files may come from
// and which it may be. Every key is optional.
type AttachmentsConfig struct {
	// Roots are folders (absolute) a task may name files under by an
	// absolute path, besides its own folder and the spool's files/.
	Roots []string `yaml:"roots"`
	// MaxBytes is the largest file a task may carry (default 20 MiB).
	MaxBytes int `yaml:"maxBytes"`
	// Types are the kinds of file allowed: image, pdf, office, text
	// (default all four).
	Types []string `yaml:"types"`
	// InlineText is the most bytes of text files an API task inlines into
	// its message, all files together (default 64 KiB).
	InlineText int `yaml:"inlineText"`
}

// The kinds of attachment (AttachmentsConfig.Types).
const (
	AttachImage  = "image"
	AttachPDF    = "pdf"
	AttachOffice = "office"
	AttachText   = "text"
)

// AttachKinds are the kinds, in the order the docs list them.
var AttachKinds = []string{AttachImage, AttachPDF, AttachOffice, AttachText}

// Attachment limits' defaults.
const (
	DefaultAttachMaxBytes   = 20 << 20
	DefaultAttachInlineText = 64 << 10
)

// checkAttachments fills the defaults of `attachments:` and checks it.
func (c *Config) checkAttachments() *ConfigError {
	a := &c.Attachments
	if a.MaxBytes == 0 {
		a.MaxBytes = DefaultAttachMaxBytes
	}
	if a.MaxBytes < 0 || a.MaxBytes > 1<<30 {
		return &ConfigError{Key: "attachments.maxBytes", Msg: fmt.Sprintf("%d is out of range 1 to 1 GiB", a.MaxBytes)}
	}
	if a.InlineText == 0 {
		a.InlineText = DefaultAttachInlineText
	}
	if a.InlineText < 0 || a.InlineText > 8<<20 {
		return &ConfigError{Key: "attachments.inlineText", Msg: fmt.Sprintf("%d is out of range 1 to 8 MiB", a.InlineText)}
	}
	if len(a.Types) == 0 {
		a.Types = slices.Clone(AttachKinds)
	}
	for i, k := range a.Types {
		if !slices.Contains(AttachKinds, k) {
			return &ConfigError{Key: fmt.Sprintf("attachments.types[%d]", i), Msg: fmt.Sprintf("%q is not image, pdf, office or text", k)}
		}
	}
	for i, r := range a.Roots {
		if !filepath.IsAbs(r) {
			return &ConfigError{Key: fmt.Sprintf("attachments.roots[%d]", i), Msg: fmt.Sprintf("%q is not an absolute path", r)}
		}
		a.Roots[i] = filepath.Clean(r)
	}
	return nil
}

// Allows reports whether files of kind k may be attached at all.
func (a AttachmentsConfig) Allows(k string) bool { return slices.Contains(a.Types, k) }

// checkUpload checks a site's upload keys: both or neither, since a file
// put on the page counts only once the page shows it.
func (s SiteConfig) checkUpload(key string) *ConfigError {
	switch {
	case s.Upload != "" && s.Attached == "":
		return &ConfigError{Key: key + ".attached", Msg: "missing: with upload, the page's attachment chip or thumbnail, which must show every file before the send"}
	case s.Upload == "" && s.Attached != "":
		return &ConfigError{Key: key + ".upload", Msg: "missing: attached is only read after an upload (the page's input[type=file], or the button that opens one)"}
	}
	return nil
}
