package main

import (
	"os"
	"path/filepath"
	"strings"
)

// fsInfo names the file system that holds dir, as the core figures'
// notes say: "ext4 on /dev/vda, no journal". On ext4 without a journal,
// creating a file walks every inode of its block group freed in the last
// minute or more, so the disk's own rate depends on what was deleted
// lately, by anyone (see markTopdir and spool/spares.go). Linux only; ""
// where it cannot tell.
func fsInfo(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if p, err := filepath.EvalSymlinks(abs); err == nil {
		abs = p
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	var point, fstype, source string
	for _, line := range strings.Split(string(data), "\n") {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE SUPER
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 2 {
			continue
		}
		mp := f[4]
		if (abs == mp || strings.HasPrefix(abs, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= len(point) {
			point, fstype, source = mp, g[0], g[1]
		}
	}
	if fstype == "" {
		return ""
	}
	out := fstype + " on " + source
	if fstype == "ext4" {
		dev := filepath.Base(source)
		if m, _ := filepath.Glob("/proc/fs/jbd2/" + dev + "-*"); len(m) > 0 {
			out += ", journaled"
		} else if _, err := os.Stat("/proc/fs/ext4/" + dev); err == nil {
			out += ", no journal"
		}
	}
	return out
}
