package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"bidbench/loadgen/internal/client"
)

// setupProbeBudget bounds how long an instance still working off a backlog (an overloaded earlier
// window) may answer the first probe late; a refused connection fails at once.
const setupProbeBudget = 60 * time.Second

const setupHeader = "X-Bidbench-Phase: setup\r\n"

// UnreachableError is a target that cannot serve the run; the driver exits with ExitUnreachable.
type UnreachableError struct{ Detail string }

func (e *UnreachableError) Error() string { return e.Detail }

// probe checks that the first target answers GET path with 200.
func probe(pool *client.Pool, base, path string, timeout time.Duration, mustAnswer bool) error {
	started := time.Now()
	for {
		res := pool.Do("GET", path, "", nil, setupHeader, time.Now().Add(timeout), false)
		if res.Err == client.Timeout && time.Since(started) < setupProbeBudget {
			continue
		}
		if !mustAnswer {
			return nil
		}
		if res.Err != client.OK {
			return &UnreachableError{fmt.Sprintf("GET %s%s: %s (%v): is the target up?", base, path, res.Err, res.Detail)}
		}
		if res.Status != 200 {
			return &UnreachableError{fmt.Sprintf("GET %s%s answered %d: is the target seeded and ready?", base, path, res.Status)}
		}
		return nil
	}
}

// openItems pages GET /categories/{1..19}/items?limit=100 on the first target for the ids of open
// auctions, which bids go to.
func openItems(pool *client.Pool, pages int, timeout time.Duration) []int64 {
	var ids []int64
	for c := 1; c <= 19; c++ {
		for page := 0; page < pages; page++ {
			path := "/categories/" + strconv.Itoa(c) + "/items?limit=100&offset=" + strconv.Itoa(100*page)
			res := pool.Do("GET", path, "", nil, setupHeader, time.Now().Add(timeout), true)
			if res.Err != client.OK || res.Status != 200 {
				break
			}
			var listing struct {
				Items []struct {
					ID int64 `json:"id"`
				} `json:"items"`
			}
			if json.Unmarshal(res.Body, &listing) != nil {
				break
			}
			for _, it := range listing.Items {
				ids = append(ids, it.ID)
			}
			if len(listing.Items) < 100 {
				break
			}
		}
	}
	slices.Sort(ids)
	return ids
}
