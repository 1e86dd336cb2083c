package manifests

// splitDocuments is what the YAML reader (k8s.io/apimachinery's
// YAMLReader over a bufio.Reader) reads from data, a text ending in a
// newline, as slices of data instead of a copy of each line and document:
// the reader's buffers were an eighth of a read's allocations. It returns
// false for a text with a carriage return (the reader drops a '\r' before
// each '\n') or a "---" line the reader could refuse or read otherwise
// (anything but spaces or a comment after the marker), which the reader
// then splits (TestSplitDocumentsIsYAMLReader).
func splitDocuments(data []byte) ([][]byte, bool) {
	var raws [][]byte
	start := 0 // of the document being read
	for at := 0; at < len(data); {
		end := at
		for end < len(data) && data[end] != '\n' {
			if data[end] == '\r' {
				return nil, false
			}
			end++
		}
		if end == len(data) {
			return nil, false // no final newline
		}
		line := data[at:end]
		next := end + 1
		if len(line) >= 3 && string(line[:3]) == "---" {
			if !plainSeparator(line[3:]) {
				return nil, false
			}
			// The reader ends a document at a separator, and starts the
			// next one with it when nothing came before.
			if at > start {
				raws = append(raws, data[start:at:at])
				start = next
			}
		}
		at = next
	}
	if len(data) > start {
		raws = append(raws, data[start:len(data):len(data)])
	}
	return raws, true
}

// plainSeparator says whether what follows a "---" is only ASCII spaces,
// or ASCII spaces and a comment: what the reader accepts as a separator
// for certain.
func plainSeparator(rest []byte) bool {
	for _, c := range rest {
		switch c {
		case ' ', '\t', '\v', '\f':
			continue
		case '#':
			return true
		}
		return false
	}
	return true
}
