package dirsource

import (
	"io/fs"
	"os"
	"syscall"
	"time"
)

// racyWindow: a file modified this close before it was read may have been
// modified again within the same timestamp tick after the read, leaving
// its metadata unchanged; such a file is read again, never trusted.
const racyWindow = time.Second

// stamp is a file's metadata when its content was last read: the periodic
// walk re-reads only files whose stamp differs (10,000 files are 10,000
// stats, not 10,000 reads and hashes), so it stays off an edit's path.
type stamp struct {
	size  int64
	mtime time.Time
	inode uint64
}

// stampOf is path's stamp, or ok false when it cannot be trusted: no
// metadata, or modified within racyWindow of readAt.
func stampOf(path string, readAt time.Time) (stamp, bool) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(readAt.Add(-racyWindow)) {
		return stamp{}, false
	}
	return stamp{size: info.Size(), mtime: info.ModTime(), inode: inodeOf(info)}, true
}

func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino) //nolint:unconvert // Ino's width differs by platform
	}
	return 0
}

// unchanged reports whether the file at path still has the stamp st's
// content was read with: its read can be skipped.
func (st *fileState) unchanged(path string, link bool) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular() &&
		st.holds(stamp{size: info.Size(), mtime: info.ModTime(), inode: inodeOf(info)}, link)
}

// holds reports whether a file found with metadata now (and link) still
// has the content st was read with.
func (st *fileState) holds(now stamp, link bool) bool {
	if !st.stamped || st.failing || st.replaced || st.suspect > 0 || st.link != link {
		return false
	}
	return now.size == st.stamp.size && now.mtime.Equal(st.stamp.mtime) && now.inode == st.stamp.inode
}
