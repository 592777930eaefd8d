package main

import (
	"os"
	"syscall"
)

// statOf is what identifies a file's content without reading it: device,
// inode, size, and the modification and status-change times in
// nanoseconds. Rewriting a file changes its status-change time, which no
// program can set back; false when the platform does not say.
func statOf(fi os.FileInfo) (fileStat, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return fileStat{}, false
	}
	return fileStat{
		Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		Mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
	}, true
}
