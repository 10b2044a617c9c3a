package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.gazette.dev/core/message"
)

// runScript publishes to one journal the commands read from stdin, one per line, so that a test
// can interleave Gazette's own Publisher with queries of its own:
//
//	clock UNIX_MS     move every producer's clock to this time (clocks never go back)
//	commit P          producer P publishes a committed (OUTSIDE_TXN) message
//	continue P        producer P publishes an uncommitted (CONTINUE_TXN) message
//	ack P             producer P appends its ACK intents
//	rollback P K      producer P re-appends its K-th set of ACK intents (a restored checkpoint)
//	dup P K           producer P's K-th message is re-sent verbatim
//	nouuid            a message without a UUID
//	raw HEX           these bytes, appended as they are
//	sync              wait until everything above is appended, then print "ok"
//
// Producers are numbered from 0 and created on first use.
func runScript(w *writer) {
	var clock = message.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	w.clock = &clock

	var in = bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	for in.Scan() {
		var f = strings.Fields(in.Text())
		if len(f) == 0 {
			continue
		}
		var arg = func(i int) int {
			if len(f) <= i {
				fail(fmt.Sprintf("script: %q needs %d arguments", in.Text(), i))
			}
			var n, err = strconv.Atoi(f[i])
			if err != nil {
				fail(fmt.Sprintf("script: %q: %v", in.Text(), err))
			}
			return n
		}
		switch f[0] {
		case "clock":
			w.clock.Update(time.UnixMilli(int64(arg(1))))
		case "commit":
			w.committed(w.producer(arg(1)))
		case "continue":
			w.uncommitted(w.producer(arg(1)))
		case "ack":
			w.ack(w.producer(arg(1)))
		case "rollback":
			w.rollback(w.producer(arg(1)), arg(2))
		case "dup":
			w.duplicate(w.producer(arg(1)), arg(2))
		case "nouuid":
			w.noUUID()
		case "raw":
			var b, err = hex.DecodeString(f[1])
			if err != nil {
				fail(fmt.Sprintf("script: %q: %v", in.Text(), err))
			}
			w.raw(b)
		case "sync":
			w.sync()
			fmt.Println("ok")
		default:
			fail(fmt.Sprintf("script: unknown command %q", f[0]))
		}
	}
	if err := in.Err(); err != nil {
		fail(err.Error())
	}
	w.sync()
}
