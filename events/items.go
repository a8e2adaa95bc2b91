package events

import (
	"fmt"
	"io"
	"strings"
)

// ItemOptions says how to read an item features CSV: one row per item, an
// id column and one multi-valued categorical column ("Comedy|Drama").
type ItemOptions struct {
	Item   string // id column ("": the first of ItemAliases present)
	Column string // the categorical column (default "genres")
	Sep    string // separator of its values (default "|")
	// Values fixes the category indices (a trained model's); nil builds
	// them from the file.
	Values *Index
}

// ItemFeatures are item-side categories: Of[i] lists the category indices
// (into Values, ≥ 1) of item index i. Items the file does not list, and
// the unknown item 0, have none.
type ItemFeatures struct {
	Values *Index
	Of     [][]int32
}

// LoadItemFeatures reads the categories of the items of vocabulary items.
// Rows for items outside it are skipped (they have no events); an item
// listed twice is an error, since which row wins would depend on order.
func LoadItemFeatures(path string, items *Index, opt ItemOptions) (*ItemFeatures, error) {
	if opt.Column == "" {
		opt.Column = "genres"
	}
	if opt.Sep == "" {
		opt.Sep = "|"
	}
	t, err := openTable(path)
	if err != nil {
		return nil, err
	}
	defer t.close()
	header, cols := t.header, t.cols
	if opt.Item == "" {
		for _, a := range ItemAliases {
			if _, ok := cols[a]; ok {
				opt.Item = a
				break
			}
		}
	}
	for _, c := range []string{opt.Item, opt.Column} {
		if _, ok := cols[c]; !ok || c == "" {
			return nil, fmt.Errorf("%s:1: header has no column %q (columns: %v)", path, c, header)
		}
	}
	type row struct {
		item int32
		cats []string
	}
	var rows []row
	var all []string
	seen := map[string]int{}
	for {
		rec, line, err := t.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		id := strings.TrimSpace(rec[cols[opt.Item]])
		if id == "" {
			return nil, fmt.Errorf("%s:%d: column %q: empty", path, line, opt.Item)
		}
		if first, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s:%d: item %q already listed on line %d", path, line, id, first)
		}
		seen[id] = line
		k := items.Lookup(id)
		if k == 0 {
			continue
		}
		var cats []string
		for _, c := range strings.Split(rec[cols[opt.Column]], opt.Sep) {
			if c = strings.TrimSpace(c); c != "" {
				cats = append(cats, c)
			}
		}
		rows = append(rows, row{k, cats})
		all = append(all, cats...)
	}
	feat := &ItemFeatures{Values: opt.Values, Of: make([][]int32, items.Len())}
	if feat.Values == nil {
		feat.Values = NewIndex(opt.Column, all)
	}
	for _, r := range rows {
		for _, c := range r.cats {
			if k := feat.Values.Lookup(c); k != 0 {
				feat.Of[r.item] = append(feat.Of[r.item], k)
			}
		}
	}
	return feat, nil
}
