package fsx

import "golang.org/x/sys/unix"

// folderID is a folder's device and inode number, and its birth time: a
// folder made later that reuses the inode number of a removed one has
// another.
type folderID struct {
	dev, ino uint64
	born     unix.StatxTimestamp
}

const folderIDMask = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_BTIME

func idOf(st *unix.Statx_t) (folderID, bool) {
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFDIR || st.Mask&folderIDMask != folderIDMask {
		return folderID{}, false
	}
	return folderID{dev: unix.Mkdev(st.Dev_major, st.Dev_minor), ino: st.Ino, born: st.Btime}, true
}

// folderIDAt is the folder at path (a symlink there is not followed: it
// has no folder's identity).
func folderIDAt(path string) (folderID, bool) {
	var st unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, folderIDMask, &st) != nil {
		return folderID{}, false
	}
	return idOf(&st)
}

// folderIDBeneath is the folder that root/parts... is, opened by an openat
// walk that follows no link.
func folderIDBeneath(root string, parts []string) (folderID, bool) {
	fd, _, err := openDirBeneath(root, parts, false)
	if err != nil {
		return folderID{}, false
	}
	defer unix.Close(fd)
	var st unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, folderIDMask, &st) != nil {
		return folderID{}, false
	}
	return idOf(&st)
}
