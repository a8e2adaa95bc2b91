package events

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
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
		err = csvErr(path, err)
	default:
		t.header = slices.Clone(header) // ReuseRecord overwrites it
		if t.cols, err = headerIndex(t.header); err != nil {
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
		return nil, 0, csvErr(t.path, err)
	}
	line, _ := t.r.FieldPos(0)
	if len(rec) != len(t.header) {
		return nil, line, fmt.Errorf("%s:%d: %d fields, header has %d", t.path, line, len(rec), len(t.header))
	}
	return rec, line, nil
}

func (t *table) close() { t.f.Close() }

// headerIndex maps trimmed column names to their index.
func headerIndex(header []string) (map[string]int, error) {
	cols := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimSpace(h)
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if _, dup := cols[h]; dup {
			return nil, fmt.Errorf("duplicate header column %q", h)
		}
		cols[h] = i
	}
	return cols, nil
}

// csvErr puts the file name in front of an encoding/csv error, which
// already carries line and column for syntax errors.
func csvErr(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: column %d: %w", path, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
