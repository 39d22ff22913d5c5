// Package smbd runs a real Samba server for tests: smbd in the foreground
// on 127.0.0.1 at a free high port, its config, state, lock, cache and pid
// folders under the test's temp dir, exporting folders as guest-writable
// shares; smbclient to drop files through it the way an SMB client does;
// and smbnetfs to mount a share through FUSE, as a host that sees the spool
// only over SMB would. Every process it starts ends at the test's cleanup
// (and with the test process: Pdeathsig).
//
// A missing tool skips the test, except under CI=true, where CI installs
// Samba, smbclient and smbnetfs and a missing one is a broken CI.
package smbd
