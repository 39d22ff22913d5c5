//go:build linux

package fsx

import (
	"os"

	"golang.org/x/sys/unix"
)

// fsTopdirFL is FS_TOPDIR_FL, chattr's +T (missing from x/sys/unix).
const fsTopdirFL = 0x00020000

// MarkTopdir makes ext2/3/4 place dir's subfolders as it places the
// root's (Orlov: in the block group with the fewest folders among those
// with more free inodes and blocks than average), not beside dir.
//
// Why the bench wants that: on ext4 without a journal, creating a file
// walks every free inode of its group that was freed in the last 60 s,
// or 360 s while its inode table block is dirty (fs/ext4/ialloc.c,
// recently_deleted: RECENTCY_MIN, RECENTCY_DIRTY), and a burst of creates
// keeps those blocks dirty. Measured on this machine: 200 creates in a
// fresh folder of /tmp cost 1,196-1,309 µs each, minutes after other runs
// had removed their temp folders, and 19-28 µs in a folder marked so. The
// temp folder's group holds whatever every test and build deleted
// lately. A group of their own is not always a clean one: the group that
// a large removal just emptied is the very kind Orlov picks, so the bench
// also waits out its own last clean-up and tries several groups
// (awaitCleaned, freshGroup).
func MarkTopdir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	flags, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	return unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, flags|fsTopdirFL)
}
