//go:build unix

package fsx

import (
	"os"
	"os/user"
	"strconv"
)

// ChownToUser gives p to the named user (and its primary group).
func ChownToUser(p, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return err
	}
	return os.Chown(p, uid, gid)
}
