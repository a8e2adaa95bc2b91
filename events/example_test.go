package events_test

import (
	"fmt"

	"romae/events"
)

// Load an events file, split each user's sequence chronologically and cut
// it into the windows a causal model reads.
func ExampleLoad() {
	l, err := events.Load("testdata/events.csv", events.Options{Categorical: []string{"device"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range l.Users {
		fmt.Print(u.ID, ":")
		for _, e := range u.Events {
			fmt.Printf(" %s@%.0f(%d)", l.Vocab.Items.Values[e.Item], e.Time, e.Label)
		}
		fmt.Println()
	}
	sp, _ := events.SplitRule{Rule: events.LeaveOneOut}.Apply(l)
	for _, w := range events.Windows(l, sp, events.Test, 1, 2, 1) {
		fmt.Printf("user %s: events [%d, %d) predict event %v\n", l.Users[w.User].ID, w.Start, w.End, w.Targets)
	}
	// Output:
	// u2: 9@50(0) 10@100(1) 10@300(1)
	// u1: 1@150(1) 2@200(1) 2@200(0) 3@200(0)
	// user u2: events [0, 2) predict event [2]
	// user u1: events [1, 3) predict event [3]
}
