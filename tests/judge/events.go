package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"go.gazette.dev/core/labels"
)

// eventStats is what publishEvents reports on stdout: how many events it committed, rolled
// back, and re-sent as duplicates.
type eventStats struct {
	Committed  int `json:"committed"`
	RolledBack int `json:"rolledBack"`
	Duplicates int `json:"duplicates"`
}

// publishEvents writes n purchase events of `users` users to an ndjson journal: small
// transactions from three producers, some rolled back by a recovering producer and some
// committed events re-sent, as a realistic stream with failures looks. With `rate` > 0, at most
// that many events a second: each transaction, rollback or re-send is sent whole, then waits
// its turn, so that a transaction's events are acknowledged at once.
func publishEvents(w *writer, n, users int, start time.Time, rate float64) eventStats {
	if w.contentType != labels.ContentType_JSONLines {
		fail("events are ndjson")
	}
	var stats eventStats
	var committed = map[*producer][]*doc{}
	var open = map[*producer][]*doc{}
	var event = func() *doc {
		w.seq++
		var at = start.Add(time.Duration(w.rng.Intn(600)) * time.Second)
		return &doc{contentType: w.contentType, body: fmt.Sprintf(
			`"user":"user-%02d","amount":%d,"ts":%q,"kind":"purchase","seq":%d`,
			w.rng.Intn(users), 1+w.rng.Intn(100), at.UTC().Format(time.RFC3339), w.seq)}
	}
	var began = time.Now()
	for sent := 0; sent < n; {
		if rate > 0 {
			time.Sleep(time.Until(began.Add(time.Duration(float64(sent) / rate * float64(time.Second)))))
		}
		var p = w.producer(w.rng.Intn(3))
		switch r := w.rng.Intn(100); {
		case r < 75: // a transaction of 1-5 events, acknowledged
			for i := 1 + w.rng.Intn(5); i > 0 && sent < n; i-- {
				var d = event()
				must(p.pub.PublishUncommitted(w.mapping, d))
				open[p] = append(open[p], d.clone())
				sent++
			}
			w.ack(p)
			stats.Committed += len(open[p])
			committed[p] = append(committed[p], open[p]...)
			open[p] = nil
		case r < 88: // events the producer's recovery rolls back
			if len(p.intents) == 0 {
				continue
			}
			for i := 1 + w.rng.Intn(4); i > 0 && sent < n; i-- {
				must(p.pub.PublishUncommitted(w.mapping, event()))
				sent++
				stats.RolledBack++
			}
			w.rollback(p, len(p.intents)-1) // re-append the last checkpoint's ACKs
			var fresh, _ = p.pub.BuildAckIntents()
			_ = fresh // the rolled-back transaction's own intents are never appended
		default: // a committed event sent again, UUID and all
			if len(committed[p]) == 0 {
				continue
			}
			w.frame(committed[p][w.rng.Intn(len(committed[p]))])
			stats.Duplicates++
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(stats)
	return stats
}
