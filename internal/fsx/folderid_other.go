//go:build !linux

package fsx

// folderID is empty where no birth time is told: nothing is cached.
type folderID struct{}

func folderIDAt(string) (folderID, bool) { return folderID{}, false }

func folderIDBeneath(string, []string) (folderID, bool) { return folderID{}, false }
