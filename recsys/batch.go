package recsys

import (
	"fmt"

	"romae/events"
	"romae/internal/bufs"
)

// Data is an events log ready for a model: the log, its item-side
// categories (nil: none) and its chronological split.
type Data struct {
	Log   *events.Log
	Items *events.ItemFeatures
	Split events.Split
}

// Batch is B windows as right-padded token rows of length L. Row b's
// tokens k < Len[b] are events Start..End−1 of its window; later tokens
// are padding, which the causal mask keeps away from every real token.
type Batch struct {
	B, L   int
	Len    []int     // [B]
	Item   []int32   // [B·L] item index (0: padding or unknown)
	Action []int8    // [B·L] ranking: outcome of the previous event, 0 none, 1 negative, 2 positive
	Cats   []int32   // [B·L·nCats] event-side categories
	Time   []float64 // [B·L] seconds; padding repeats the row's last time
	// Target is −1 where the token's output is not scored, else the
	// outcome (ranking, 0 or 1) or the next item (next) it must predict.
	Target []int32        // [B·L]
	Ref    []events.Event // [B·L] the target event of each scored token (for its time and user)
	User   []int          // [B] user index of each row
	Event  []int          // [B·L] index of the target event in its user's sequence (−1: none)
}

// shift is the token offset of a target in task's windows (events.Windows).
func shift(task string) int {
	if task == TaskNext {
		return 1
	}
	return 0
}

// Collate fills bt (reused when large enough) with windows ws for task.
// Ranking targets must have an outcome; a next-item target whose item is
// unknown to the vocabulary is left unscored (it cannot be ranked).
func (d *Data) Collate(bt *Batch, ws []events.Window, task string) (*Batch, error) {
	if bt == nil {
		bt = &Batch{}
	}
	L := 0
	for _, w := range ws {
		L = max(L, w.End-w.Start)
	}
	B := len(ws)
	nc := 0
	if d.Log.Vocab != nil {
		nc = len(d.Log.Vocab.EventCats)
	}
	bt.B, bt.L = B, L
	bt.Len, bt.User = bufs.Resize(bt.Len, B), bufs.Resize(bt.User, B)
	bt.Item, bt.Action, bt.Target = bufs.Resize(bt.Item, B*L), bufs.Resize(bt.Action, B*L), bufs.Resize(bt.Target, B*L)
	bt.Cats, bt.Time = bufs.Resize(bt.Cats, B*L*nc), bufs.Resize(bt.Time, B*L)
	bt.Ref, bt.Event = bufs.Resize(bt.Ref, B*L), bufs.Resize(bt.Event, B*L)
	clear(bt.Item)
	clear(bt.Action)
	clear(bt.Cats)
	sh := shift(task)
	for b, w := range ws {
		evs := d.Log.Users[w.User].Events
		n := w.End - w.Start
		bt.Len[b], bt.User[b] = n, w.User
		for k := 0; k < L; k++ {
			r := b*L + k
			bt.Target[r], bt.Event[r] = -1, -1
			if k >= n {
				bt.Time[r] = evs[w.End-1].Time
				continue
			}
			e := evs[w.Start+k]
			bt.Item[r], bt.Time[r] = e.Item, e.Time
			copy(bt.Cats[r*nc:(r+1)*nc], e.Cats)
			if task == TaskRanking && k > 0 {
				bt.Action[r] = evs[w.Start+k-1].Label + 1 // −1 (none) → 0
			}
		}
		for _, j := range w.Targets {
			r := b*L + j - sh - w.Start
			e := evs[j]
			switch task {
			case TaskRanking:
				if e.Label < 0 {
					return nil, fmt.Errorf("%s:%d: the event has no outcome to rank (set a label or rating column)", d.Log.Path, e.Line)
				}
				bt.Target[r] = int32(e.Label)
			default:
				if e.Item == 0 {
					continue
				}
				bt.Target[r] = e.Item
			}
			bt.Ref[r], bt.Event[r] = e, j
		}
	}
	return bt, nil
}
