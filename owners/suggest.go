package owners

import (
	"container/heap"
	"fmt"
	"hash/fnv"
)

// suggest picks approvers for the paths still waiting: a greedy set cover
// over those paths, drawing first on their leaf approvers (the people
// closest to the files) and on the rest of their approvers only for paths
// no leaf approver can take. Each round takes whoever approves the most
// remaining paths; ties go by an order that is pseudo-random but fixed for
// a change number, so one person is not always asked first, and asking
// again gives the same answer.
func (r *Repo) suggest(files []Coverage, number int, excluded func(string) bool) []string {
	var remaining []int
	for i, cov := range files {
		if !cov.Approved && cov.Blocked == "" && len(cov.Approvers) > 0 {
			remaining = append(remaining, i)
		}
	}
	covered := make([]bool, len(files))
	var picked []string
	// First the leaf approvers, then, for what they leave, everyone.
	for _, leafOnly := range []bool{true, false} {
		var left []int
		for _, i := range remaining {
			if !covered[i] {
				left = append(left, i)
			}
		}
		if len(left) == 0 {
			break
		}
		covers := map[string][]int{}
		for _, i := range left {
			candidates := files[i].Approvers
			if leafOnly {
				candidates = files[i].res.LeafApprovers
			}
			for _, a := range candidates {
				if !excluded(a) {
					covers[a] = nil
				}
			}
		}
		// Who covers what: every approver of a path, not only its leaf
		// approvers, since a leaf approver of one path may approve others
		// from higher up.
		for _, i := range left {
			for _, a := range files[i].Approvers {
				if _, ok := covers[a]; ok {
					covers[a] = append(covers[a], i)
				}
			}
		}
		picked = append(picked, greedyCover(covers, covered, number)...)
	}
	return picked
}

// greedyCover runs the greedy set cover over covers (candidate to the path
// indices it covers), marking covered paths. Gains only fall as paths get
// covered, so a candidate's last computed gain bounds its real one: the heap
// re-checks the top candidate and takes it only when the bound is exact
// (the lazy greedy algorithm), which keeps thousands of paths and
// candidates fast.
func greedyCover(covers map[string][]int, covered []bool, number int) []string {
	h := make(coverHeap, 0, len(covers))
	for login, idx := range covers {
		h = append(h, coverItem{login: login, gain: len(idx), rank: tieRank(number, login)})
	}
	heap.Init(&h)
	gain := func(login string) int {
		n := 0
		for _, i := range covers[login] {
			if !covered[i] {
				n++
			}
		}
		return n
	}
	var picked []string
	for h.Len() > 0 {
		top := heap.Pop(&h).(coverItem)
		g := gain(top.login)
		if g == 0 {
			continue
		}
		if g < top.gain {
			top.gain = g
			heap.Push(&h, top)
			continue
		}
		picked = append(picked, top.login)
		for _, i := range covers[top.login] {
			covered[i] = true
		}
	}
	return picked
}

// tieRank orders candidates with equal gains, differently for each change.
func tieRank(number int, login string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", number, login)
	return h.Sum64()
}

type coverItem struct {
	login string
	gain  int
	rank  uint64
}

type coverHeap []coverItem

func (h coverHeap) Len() int { return len(h) }
func (h coverHeap) Less(i, j int) bool {
	if h[i].gain != h[j].gain {
		return h[i].gain > h[j].gain
	}
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].login < h[j].login
}
func (h coverHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *coverHeap) Push(x any)   { *h = append(*h, x.(coverItem)) }
func (h *coverHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
