//go:build !linux

package fsx

// ReadDirInodes lists dir as ReadDir does; the inode numbers are not
// known here (0), so callers stat what they need.
func ReadDirInodes(dir string) ([]DirInode, error) {
	ents, err := ReadDir(dir)
	out := make([]DirInode, 0, len(ents))
	for _, e := range ents {
		out = append(out, DirInode{Name: e.Name(), Type: e.Type(), Known: true})
	}
	return out, err
}
