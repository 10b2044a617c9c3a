package main

import (
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	pb "go.gazette.dev/core/broker/protocol"
)

// traffic publishes the random mix of random() to every journal, op by op at about `rate`
// operations a second per journal, for `seconds` (0: until SIGTERM or SIGINT). It then
// acknowledges most producers' open transactions (some stay open, as a crashed producer's
// would) and waits until every append has committed. Appends retry through broker failures.
//
// With noRollbacks the mix has no rollbacks (the same random draws, the rollback not written).
// A rollback re-appends an older ACK, and Gazette's readers then go back to it for that
// producer (Sequencer: "unexpected ACK_TXN which is less than lastACK (loss of exactly-once
// semantics)"): a later re-send of a message committed after that ACK is committed again, and
// one of a message rolled back before is committed for the first time, both at clocks below the
// producer's messages already read.
func traffic(broker string, journals []string, seconds int, seed int64, rate int, noRollbacks bool) {
	var stop = make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	var deadline <-chan time.Time
	if seconds > 0 {
		deadline = time.After(time.Duration(seconds) * time.Second)
	}
	var writers []*writer
	for i, j := range journals {
		var w = newWriter(broker, pb.Journal(strings.TrimSpace(j)), seed+int64(i))
		w.producer(w.rng.Intn(4)) // one to four producers
		writers = append(writers, w)
	}
	var tick = time.NewTicker(time.Second / time.Duration(max(rate, 1)))
	defer tick.Stop()
loop:
	for {
		select {
		case <-stop:
			break loop
		case <-deadline:
			break loop
		case <-tick.C:
			for _, w := range writers {
				randomOp(w, w.producer(w.rng.Intn(len(w.producers))), noRollbacks)
			}
		}
	}
	for _, w := range writers {
		for _, p := range w.producers {
			if w.rng.Intn(4) != 0 {
				w.ack(p)
			}
		}
		w.sync()
	}
}

// randomOp is one step of the random mix.
func randomOp(w *writer, p *producer, noRollbacks bool) {
	switch r := w.rng.Intn(100); {
	case r < 15:
		w.committed(p)
	case r < 60:
		w.uncommitted(p)
	case r < 75:
		w.ack(p)
	case r < 80:
		if which := w.rng.Intn(1 << 20); !noRollbacks {
			w.rollback(p, which)
		}
	case r < 92:
		w.duplicate(p, w.rng.Intn(1<<20))
	default:
		w.noUUID()
	}
}
