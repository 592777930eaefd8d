package loader

import (
	"archive/zip"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
)

// zipMagic opens a zip archive (local file header or empty archive).
var zipMagic = [][]byte{[]byte("PK\x03\x04"), []byte("PK\x05\x06")}

// openZip opens the transcript inside a zip archive: the Claude.ai data
// export arrives as a zip holding conversations.json beside users.json and
// projects.json. The member read is conversations.json (at any depth), or
// else the archive's only .json/.jsonl member. The member is decompressed as
// a stream, never held whole.
func openZip(p string, f *os.File) (*Source, func(), error) {
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("zip: %w", err)
	}
	zr, err := zip.NewReader(f, info.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("zip: %w", err)
	}
	member, err := pickZipMember(zr.File)
	if err != nil {
		return nil, nil, err
	}
	rc, err := member.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("zip member %s: %w", member.Name, err)
	}
	return &Source{Path: p, R: rc, Compressed: "zip"}, func() { rc.Close() }, nil
}

// pickZipMember chooses the member to read.
func pickZipMember(files []*zip.File) (*zip.File, error) {
	var candidates []*zip.File
	for _, f := range files {
		if f.FileInfo().IsDir() {
			continue
		}
		base := path.Base(f.Name)
		if strings.HasPrefix(base, ".") || strings.HasPrefix(f.Name, "__MACOSX/") {
			continue
		}
		if strings.EqualFold(base, "conversations.json") {
			return f, nil
		}
		if strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".jsonl") {
			candidates = append(candidates, f)
		}
	}
	if len(candidates) == 1 {
		return candidates[0], nil
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	if len(names) > 8 {
		names = append(names[:8], "...")
	}
	return nil, fmt.Errorf("zip holds no conversations.json and not exactly one .json/.jsonl member (members: %s)", strings.Join(names, ", "))
}
