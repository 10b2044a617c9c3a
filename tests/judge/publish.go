package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"sort"

	"go.gazette.dev/core/broker/client"
	pb "go.gazette.dev/core/broker/protocol"
	"go.gazette.dev/core/message"
)

// producer is one Gazette Publisher and what it has written, so that messages and ACK intents
// can be re-sent as a recovering or duplicating producer would.
type producer struct {
	name    string
	pub     *message.Publisher
	sent    []*doc
	intents [][]message.AckIntent
}

// writer publishes scenario messages to one journal with Gazette's own Publisher and appends
// raw re-sends through the same AppendService, so everything lands in call order.
type writer struct {
	ctx         context.Context
	as          *client.AppendService
	journal     pb.Journal
	contentType string
	framing     message.Framing
	rng         *rand.Rand
	seq         int
	producers   []*producer
	clock       *message.Clock // shared by every producer when set; else each follows wall time
}

func (w *writer) mapping(message.Mappable) (pb.Journal, string, error) {
	return w.journal, w.contentType, nil
}

func (w *writer) producer(i int) *producer {
	for len(w.producers) <= i {
		w.producers = append(w.producers, &producer{
			name: fmt.Sprintf("p%d", len(w.producers)),
			pub:  message.NewPublisher(w.as, w.clock),
		})
	}
	return w.producers[i]
}

func (w *writer) next(p *producer) *doc {
	w.seq++
	return newDoc(w.contentType, w.seq, p.name, w.rng.Intn(40))
}

func (w *writer) committed(p *producer) {
	var d = w.next(p)
	must(p.pub.PublishCommitted(w.mapping, d))
	p.sent = append(p.sent, d.clone())
}

func (w *writer) uncommitted(p *producer) {
	var d = w.next(p)
	must(p.pub.PublishUncommitted(w.mapping, d))
	p.sent = append(p.sent, d.clone())
}

// ack appends the producer's ACK intents, as a consumer does after its checkpoint commits.
func (w *writer) ack(p *producer) {
	var intents, err = p.pub.BuildAckIntents()
	must(nil, err)
	p.intents = append(p.intents, intents)
	for _, i := range intents {
		w.raw(i.Intent)
	}
}

// rollback re-appends an older set of ACK intents, as a consumer recovering from its last
// checkpoint does: what the producer wrote after that ACK is rolled back.
func (w *writer) rollback(p *producer, which int) {
	if len(p.intents) == 0 {
		return
	}
	for _, i := range p.intents[which%len(p.intents)] {
		w.raw(i.Intent)
	}
}

// duplicate re-sends an already written message, UUID and all.
func (w *writer) duplicate(p *producer, which int) {
	if len(p.sent) == 0 {
		return
	}
	w.frame(p.sent[which%len(p.sent)])
}

// noUUID writes a message without a UUID: outside exactly-once processing.
func (w *writer) noUUID() {
	w.seq++
	w.frame(newDoc(w.contentType, w.seq, "none", w.rng.Intn(10)))
}

func (w *writer) frame(d *doc) {
	var b bytes.Buffer
	var bw = bufio.NewWriter(&b)
	if err := w.framing.Marshal(d, bw); err != nil {
		panic(err)
	}
	_ = bw.Flush()
	w.raw(b.Bytes())
}

func (w *writer) raw(b []byte) {
	var aa = w.as.StartAppend(pb.AppendRequest{Journal: w.journal}, nil)
	_, _ = aa.Writer().Write(b)
	must(nil, aa.Release())
}

// sync waits until every append so far has committed.
func (w *writer) sync() {
	for op := range w.as.PendingExcept("") {
		if err := op.Err(); err != nil {
			fail(err.Error())
		}
	}
}

func must(_ interface{}, err error) {
	if err != nil {
		panic(err)
	}
}

// scenarios are named families of publishing behaviour; each exercises one rule of the
// Sequencer against messages Gazette itself wrote.
var scenarios = map[string]func(w *writer){
	"committed": func(w *writer) {
		var p = w.producer(0)
		for i := 0; i != 30; i++ {
			w.committed(p)
		}
	},
	"uncommitted-acks": func(w *writer) {
		var p = w.producer(0)
		for t := 0; t != 5; t++ {
			for i := 0; i <= t; i++ {
				w.uncommitted(p)
			}
			w.ack(p)
		}
	},
	"rollback": func(w *writer) {
		var p = w.producer(0)
		w.uncommitted(p)
		w.uncommitted(p)
		w.ack(p)
		for i := 0; i != 4; i++ {
			w.uncommitted(p)
		}
		w.rollback(p, 0) // the first transaction's ACK again: the four are rolled back
		w.uncommitted(p)
		w.uncommitted(p)
		w.ack(p)
		w.uncommitted(p) // never acknowledged
	},
	"duplicates": func(w *writer) {
		var p = w.producer(0)
		for i := 0; i != 5; i++ {
			w.committed(p)
		}
		w.duplicate(p, 1)
		w.duplicate(p, 3)
		for i := 0; i != 4; i++ {
			w.uncommitted(p)
		}
		w.duplicate(p, 6)
		w.duplicate(p, 7)
		w.ack(p)
		w.duplicate(p, 5)
		w.duplicate(p, 8)
		w.rollback(p, 0) // the same ACK again: harmless
	},
	"many-producers": func(w *writer) {
		for i := 0; i != 120; i++ {
			var p = w.producer(w.rng.Intn(6))
			switch r := w.rng.Intn(10); {
			case r < 2:
				w.committed(p)
			case r < 8:
				w.uncommitted(p)
			default:
				w.ack(p)
			}
		}
		for _, p := range w.producers {
			w.ack(p)
		}
	},
	"long-txn": func(w *writer) {
		var a, b = w.producer(0), w.producer(1)
		for i := 0; i != 200; i++ {
			w.uncommitted(a)
			if i%7 == 0 {
				w.committed(b)
			}
			if i%50 == 0 {
				w.uncommitted(b)
			}
		}
		w.ack(b)
		w.ack(a)
	},
	"mixed": func(w *writer) {
		var p = w.producer(0)
		w.committed(p)
		w.uncommitted(p)
		w.uncommitted(p)
		w.noUUID()
		w.committed(p) // mixing: the open CONTINUE_TXN messages are discarded
		w.uncommitted(p)
		w.ack(p)
		w.noUUID()
		w.noUUID()
		w.committed(p)
	},
}

// scenarioNames lists the named scenarios in a stable order.
func scenarioNames() []string {
	var names []string
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// random publishes a seeded random interleaving of every behaviour above.
func random(w *writer) {
	var producers = 1 + w.rng.Intn(5)
	var ops = 60 + w.rng.Intn(200)
	for i := 0; i != ops; i++ {
		randomOp(w, w.producer(w.rng.Intn(producers)), false)
	}
	for _, p := range w.producers {
		if w.rng.Intn(4) != 0 {
			w.ack(p)
		}
	}
}
