package events

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"

	"romae/data"
)

// table is an open CSV file read past its header row.
type table struct {
	f      *os.File
	r      *csv.Reader
	path   string
	header []string
	cols   map[string]int // trimmed column name → index
}

// openTable opens path and reads its header row.
func openTable(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1 // checked by next, with a better message
	r.ReuseRecord = true
	t := &table{f: f, r: r, path: path}
	header, err := r.Read()
	switch {
	case err == io.EOF:
		err = fmt.Errorf("%s:1: empty file, want a header row", path)
	case err != nil:
		err = data.CSVError(path, err)
	default:
		t.header = slices.Clone(header) // ReuseRecord overwrites it
		if t.cols, err = data.CSVHeader(t.header); err != nil {
			err = fmt.Errorf("%s:1: %w", path, err)
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// next returns the next record (valid until the following call) and its
// line, or io.EOF after the last; a record whose field count differs from
// the header's is an error naming the line.
func (t *table) next() ([]string, int, error) {
	rec, err := t.r.Read()
	if err == io.EOF {
		return nil, 0, err
	}
	if err != nil {
		return nil, 0, data.CSVError(t.path, err)
	}
	line, _ := t.r.FieldPos(0)
	if len(rec) != len(t.header) {
		return nil, line, fmt.Errorf("%s:%d: %d fields, header has %d", t.path, line, len(rec), len(t.header))
	}
	return rec, line, nil
}

func (t *table) close() { t.f.Close() }
